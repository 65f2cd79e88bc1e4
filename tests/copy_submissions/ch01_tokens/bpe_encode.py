# Copied from book/ch01_tokens.md, section 1.1: merge_pair and learn_bpe, renamed; the word's split is the one learn_bpe ends with.
def bpe_encode(word: str, merges: list[tuple[str, str]]) -> tuple[str, ...]:
    """The symbols of word (characters plus "_") after applying merges in the order learned."""
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

    def learn_bpe(word_counts, n_merges):
        splits = {word: tuple(word) + ("_",) for word in word_counts}
        learned = []
        for _ in range(n_merges):
            pair_counts = Counter()
            for w, count in word_counts.items():
                symbols = splits[w]
                for pair in zip(symbols, symbols[1:]):
                    pair_counts[pair] += count
            if not pair_counts:
                break
            best = min(pair_counts, key=lambda pair: (-pair_counts[pair], pair))
            learned.append(best)
            splits = {w: merge_pair(symbols, best) for w, symbols in splits.items()}
        return learned, splits

    _, splits = learn_bpe(Counter({word: 1}), len(merges))
    return splits[word]
