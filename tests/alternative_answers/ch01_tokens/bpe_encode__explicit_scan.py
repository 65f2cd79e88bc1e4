# An explicit scan keeps the lowest rank and its first position (strict <); fuses by slicing a new list.
def bpe_encode(word: str, ranks: MergeRanks) -> tuple[str, ...]:
    """The symbols of word (characters plus "_") after applying the merges in the order learned."""
    symbols = [*word, "_"]                # bug 1: no end-of-word marker
    while True:
        best_rank, best_at = None, None
        for i in range(len(symbols) - 1):
            rank = ranks.get((symbols[i], symbols[i + 1]))
            if rank is not None and (best_rank is None or rank < best_rank):  # bug 2: the lowest rank
                best_rank, best_at = rank, i
        if best_at is None:
            return tuple(symbols)
        # bug 3: fuse at the position of the pair, not at symbols.index(left symbol)
        symbols = symbols[:best_at] + [symbols[best_at] + symbols[best_at + 1]] + symbols[best_at + 2:]
