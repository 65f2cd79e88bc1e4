# exercise: ch09_transformer/length_bias
# style: the statistics module and a sorted() with a key
import statistics


def length_bias(scores, lengths):
    pairs = sorted(zip(lengths, scores), key=lambda pair: pair[0])
    short = [s for n, s in pairs[: len(pairs) // 2]]
    long = [s for n, s in pairs[len(pairs) // 2:]]
    return statistics.fmean(short) - statistics.fmean(long)
