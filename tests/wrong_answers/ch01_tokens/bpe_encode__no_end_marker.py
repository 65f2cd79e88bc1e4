# Two bugs fixed, one left: the word starts as its characters, without the end-of-word marker "_".
def bpe_encode(word, ranks):
    symbols = list(word)
    while True:
        pairs = [(ranks[pair], i) for i, pair in enumerate(zip(symbols, symbols[1:])) if pair in ranks]
        if not pairs:
            return tuple(symbols)
        _, i = min(pairs)
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
