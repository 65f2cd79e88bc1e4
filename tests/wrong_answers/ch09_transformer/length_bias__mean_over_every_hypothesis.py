# Wrong answer: mean over every hypothesis.
def length_bias(search, steps: list, beam_sizes: list[int], max_len: int) -> dict[int, tuple[float, float, float]]:
    """For each beam size k: (mean log-prob, mean length, fraction changed from beam size 1) of the best hypotheses."""
    first = [search(step, 1, max_len, BOS_ID, EOS_ID)[0][0] for step in steps]
    results = {}
    for k in beam_sizes:
        best = [h for step in steps for h in search(step, k, max_len, BOS_ID, EOS_ID)]
        results[k] = (sum(float(log_prob) for _, log_prob in best) / len(best),
                      sum(len(tokens) for tokens, _ in best) / len(best),
                      sum(list(tokens) != list(one) for (tokens, _), one in zip(best, first)) / len(best))
    return results
