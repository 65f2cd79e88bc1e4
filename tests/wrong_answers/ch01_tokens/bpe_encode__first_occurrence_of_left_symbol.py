# Two bugs fixed, one left: the pair is fused where its left symbol first occurs, not where the pair is.
def bpe_encode(word, ranks):
    symbols = list(word) + ["_"]
    while True:
        pairs = [(ranks[pair], pair) for pair in zip(symbols, symbols[1:]) if pair in ranks]
        if not pairs:
            return tuple(symbols)
        _, best = min(pairs)
        i = symbols.index(best[0])
        symbols[i:i + 2] = [best[0] + best[1]]
