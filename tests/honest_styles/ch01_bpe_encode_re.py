# exercise: ch01_tokens/bpe_encode
# style: re.compile to split words, a while loop over merges
import re

WORD = re.compile(r"\S+")


def bpe_encode(text, merges):
    rank = {pair: i for i, pair in enumerate(merges)}
    out = []
    for word in WORD.findall(text):
        symbols = list(word) + ["_"]
        while True:
            pairs = [(rank.get((a, b), len(rank)), i) for i, (a, b) in enumerate(zip(symbols, symbols[1:]))]
            best = min(pairs, default=(len(rank), -1))
            if best[0] == len(rank):
                break
            i = best[1]
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        out.append(tuple(symbols))
    return out
