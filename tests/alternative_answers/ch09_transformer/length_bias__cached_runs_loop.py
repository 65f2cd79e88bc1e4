# Runs every search once (keyword arguments) into a dict keyed by (source, beam size), beam size 1 included, then sums
# in a plain loop.
def length_bias(search, steps: list, beam_sizes: list[int], max_len: int) -> dict[int, tuple[float, float, float]]:
    """For each beam size k: (mean log-prob, mean length, fraction changed from beam size 1) of the best hypotheses."""
    best = {}
    for i, step in enumerate(steps):
        for k in {1, *beam_sizes}:
            best[i, k] = search(step, beam_size=k, max_len=max_len, bos_id=BOS_ID, eos_id=EOS_ID)[0]
    n = len(steps)
    results = {}
    for k in beam_sizes:
        total_lp = total_len = n_changed = 0.0
        for i in range(n):
            tokens, log_prob = best[i, k]
            total_lp += float(log_prob)
            total_len += len(tokens)
            if tuple(tokens) != tuple(best[i, 1][0]):
                n_changed += 1
        results[k] = (total_lp / n, total_len / n, n_changed / n)
    return results
