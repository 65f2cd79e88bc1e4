# Copied from book/ch09_transformer.md, section 9.8 (test_scores: mean length of the outputs of a search),
# one entry per beam size.
def length_bias(search, steps, beam_sizes, max_len):
    results = {}
    for k in beam_sizes:
        hypotheses = [search(step, k, max_len, BOS_ID, EOS_ID) for step in steps]
        words = sum(len(h) for h in hypotheses) / len(hypotheses)
        results[k] = (0.0, float(words), 0.0)
    return results
