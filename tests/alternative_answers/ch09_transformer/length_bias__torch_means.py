# Takes the means with float64 torch tensors (.mean().item()) and compares the token sequences with torch.equal.
def length_bias(search, steps: list, beam_sizes: list[int], max_len: int) -> dict[int, tuple[float, float, float]]:
    """For each beam size k: (mean log-prob, mean length, fraction changed from beam size 1) of the best hypotheses."""
    greedy = [torch.tensor(search(step, 1, max_len, BOS_ID, EOS_ID)[0][0], dtype=torch.long) for step in steps]
    out = {}
    for k in beam_sizes:
        tops = [search(step, k, max_len, BOS_ID, EOS_ID)[0] for step in steps]
        log_probs = torch.tensor([float(lp) for _, lp in tops], dtype=torch.float64)
        lengths = torch.tensor([len(tokens) for tokens, _ in tops], dtype=torch.float64)
        changed = torch.tensor([not torch.equal(torch.tensor(tokens, dtype=torch.long), g)
                                for (tokens, _), g in zip(tops, greedy)], dtype=torch.float64)
        out[k] = (log_probs.mean().item(), lengths.mean().item(), changed.mean().item())
    return out
