# The pair learned first fused at its rightmost occurrence: "aaa" with the merge (a, a) gives ("a", "aa", "_"), not ("aa", "a", "_").
def bpe_encode(word: str, ranks: MergeRanks) -> tuple[str, ...]:
    """The symbols of word (characters plus "_") after applying the merges in the order learned."""
    symbols = list(word) + ["_"]
    while True:
        pairs = [(ranks[pair], -i) for i, pair in enumerate(zip(symbols, symbols[1:])) if pair in ranks]
        if not pairs:
            return tuple(symbols)
        _, minus_i = min(pairs)
        i = -minus_i
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
