# Wrong answer: of the occurrences of the pair learned first, the rightmost fuses first ("aaa" -> a, aa).
def bpe_encode(word: str, ranks: MergeRanks) -> tuple[str, ...]:
    """The symbols of word (characters plus "_") after applying the merges in the order learned."""
    symbols = list(word) + ["_"]                                            # bug 1: the end-of-word marker
    while True:
        pairs = [(ranks[pair], i) for i, pair in enumerate(zip(symbols, symbols[1:])) if pair in ranks]
        if not pairs:
            return tuple(symbols)
        _, i = min(pairs, key=lambda rank_at: (rank_at[0], -rank_at[1]))     # the pair learned first, rightmost occurrence
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]                    # bug 3: at an occurrence of the pair itself
