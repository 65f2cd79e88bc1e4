# Lazy combination: the page's merge_pair (section 1.1) replayed over the merges in the order learned, from tuple(word) + ("_",) as learn_bpe starts.
def bpe_encode(word, ranks):
    def merge_pair(symbols, pair):
        fused, i = [], 0
        while i < len(symbols):
            if symbols[i:i + 2] == pair:
                fused.append(symbols[i] + symbols[i + 1])
                i += 2
            else:
                fused.append(symbols[i])
                i += 1
        return tuple(fused)

    symbols = tuple(word) + ("_",)
    for pair in sorted(ranks, key=ranks.get):
        symbols = merge_pair(symbols, pair)
    return symbols
