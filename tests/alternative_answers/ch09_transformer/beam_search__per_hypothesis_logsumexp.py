# Extends each hypothesis in its own loop with log p = z - logsumexp(z), and writes the stopping rule as "every open
# score below every pooled one" (min/max).
@torch.no_grad()
def beam_search(step, beam_size: int, max_len: int, bos_id: int = BOS_ID,
                eos_id: int = EOS_ID) -> list[tuple[list[int], float]]:
    """The beam_size best hypotheses, best first: (tokens without <bos>, total log-probability)."""
    beam = [([bos_id], 0.0)]
    pool = []
    by_score = lambda h: h[1]
    for _ in range(max_len):
        logits = step(torch.tensor([tokens for tokens, _ in beam], dtype=torch.long)).double()
        finished, still_open = [], []
        for (tokens, total), z in zip(beam, logits):
            log_p = (z - torch.logsumexp(z, dim=0)).tolist()
            for token, lp in enumerate(log_p):
                (finished if token == eos_id else still_open).append((tokens + [token], total + lp))
        pool = sorted(pool + finished, key=by_score, reverse=True)[:beam_size]
        beam = sorted(still_open, key=by_score, reverse=True)[:beam_size]
        if len(pool) == beam_size and max(s for _, s in beam) < min(s for _, s in pool):
            break
    result = sorted(pool + beam, key=by_score, reverse=True)[:beam_size]
    return [(tokens[1:], total) for tokens, total in result]
