# Wrong answer: stops at first finished.
@torch.no_grad()
def beam_search(step, beam_size: int, max_len: int, bos_id: int = BOS_ID,
                eos_id: int = EOS_ID) -> list[tuple[list[int], float]]:
    """The beam_size best hypotheses, best first: (tokens without <bos>, total log-probability)."""
    beam, pool = [([bos_id], 0.0)], []
    for _ in range(max_len):
        logits = step(torch.tensor([tokens for tokens, _ in beam], dtype=torch.long))
        log_probs = F.log_softmax(logits.double(), dim=-1)
        candidates = sorted(((tokens + [token], total + value) for (tokens, total), row in zip(beam, log_probs.tolist())
                             for token, value in enumerate(row)), key=lambda hypothesis: hypothesis[1], reverse=True)
        pool = sorted(pool + [c for c in candidates if c[0][-1] == eos_id], key=lambda h: h[1], reverse=True)[:beam_size]
        beam = [c for c in candidates if c[0][-1] != eos_id][:beam_size]
      
        if pool:
            break
    best = sorted(pool + beam, key=lambda hypothesis: hypothesis[1], reverse=True)[:beam_size]
    return [(tokens[1:], total) for tokens, total in best]
