# Keeps the open beam as tensors (prefixes (K, t), scores (K,) float64) and picks the best open candidates with topk
# over the flattened (K, V) scores, the <eos> column set to -inf; the pool stays a Python list.
@torch.no_grad()
def beam_search(step, beam_size: int, max_len: int, bos_id: int = BOS_ID,
                eos_id: int = EOS_ID) -> list[tuple[list[int], float]]:
    """The beam_size best hypotheses, best first: (tokens without <bos>, total log-probability)."""
    prefixes = torch.tensor([[bos_id]], dtype=torch.long)                # one open hypothesis at the start
    scores = torch.zeros(1, dtype=torch.float64)
    pool = []                                                            # finished: (tokens with <bos>, score)
    for _ in range(max_len):
        log_probs = F.log_softmax(step(prefixes).double(), dim=-1)       # normalised log-probabilities
        totals = scores[:, None] + log_probs                             # (K, V)
        V = totals.shape[1]
        for row in range(totals.shape[0]):                               # candidates ending with <eos> go to the pool
            pool.append((prefixes[row].tolist() + [eos_id], totals[row, eos_id].item()))
        pool = sorted(pool, key=lambda h: h[1], reverse=True)[:beam_size]
        open_totals = totals.clone()
        open_totals[:, eos_id] = float("-inf")
        best, flat = open_totals.flatten().topk(min(beam_size, totals.shape[0] * (V - 1)))
        prefixes = torch.cat([prefixes[flat // V], (flat % V)[:, None]], dim=1)
        scores = best
        if len(pool) == beam_size and scores[0].item() < pool[-1][1]:    # pool full, best open below its worst
            break
    beam = [(tokens, total) for tokens, total in zip(prefixes.tolist(), scores.tolist())]
    final = sorted(pool + beam, key=lambda h: h[1], reverse=True)[:beam_size]
    return [(tokens[1:], float(total)) for tokens, total in final]
