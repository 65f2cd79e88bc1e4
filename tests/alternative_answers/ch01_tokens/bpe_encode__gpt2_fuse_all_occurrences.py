# As GPT-2: lowest-rank pair via ranks.get (inf if absent), then every occurrence fused in one left-to-right pass.
def bpe_encode(word: str, ranks: MergeRanks) -> tuple[str, ...]:
    """The symbols of word (characters plus "_") after applying the merges in the order learned."""
    symbols = list(word) + ["_"]          # bug 1: the colleague forgot the end-of-word marker
    while len(symbols) > 1:
        # bug 2: fuse the pair learned first (lowest rank), not the leftmost pair that is a merge
        best = min(zip(symbols, symbols[1:]), key=lambda pair: ranks.get(pair, float("inf")))
        if best not in ranks:
            break
        # bug 3: fuse where the pair itself occurs, not at the first occurrence of its left symbol
        fused, i = [], 0
        while i < len(symbols):
            if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                fused.append(symbols[i] + symbols[i + 1])
                i += 2
            else:
                fused.append(symbols[i])
                i += 1
        symbols = fused
    return tuple(symbols)
