# Copied from transformer_lib/decoding.py (beam_search, with length_penalty inlined), for one
# source row (B = 1) and the step function it is given, made exact for this exercise: alpha = 0
# (no length penalty) and float64 scores; the final beam returned best first.
@torch.no_grad()
def beam_search(step, beam_size, max_len, bos_id=BOS_ID, eos_id=EOS_ID, alpha=0.0, pad_id=PAD_ID):
    B, K = 1, beam_size
    ys = torch.full((B * K, 1), bos_id, dtype=torch.long)
    scores = torch.full((B, K), -math.inf, dtype=torch.float64)
    scores[:, 0] = 0.0  # all beams start equal: keep one, or the top-K would be K copies
    lengths = torch.zeros(B, K)
    finished = torch.zeros(B, K, dtype=torch.bool)
    for _ in range(max_len):
        logp = F.log_softmax(step(ys).double(), dim=-1).view(B, K, -1)
        n_vocab = logp.shape[-1]
        pad_only = torch.full_like(logp[0, 0], -math.inf).index_fill(0, torch.tensor([pad_id]), 0.0)
        logp = torch.where(finished[..., None], pad_only, logp)
        cand_scores = (scores[..., None] + logp).view(B, K * n_vocab)
        cand_lengths = (lengths + (~finished).float())[..., None].expand(B, K, n_vocab).reshape(B, K * n_vocab)
        best = (cand_scores / ((5.0 + cand_lengths) / 6.0) ** alpha).topk(K, dim=-1).indices  # (B, K)
        beam, token = best // n_vocab, best % n_vocab
        scores, lengths = cand_scores.gather(1, best), cand_lengths.gather(1, best)
        finished = finished.gather(1, beam) | (token == eos_id)
        prefixes = ys.view(B, K, -1).gather(1, beam[..., None].expand(B, K, ys.shape[1]))
        ys = torch.cat([prefixes, token[..., None]], dim=-1).view(B * K, -1)
        if finished.all():
            break
    return [([t for t in row[1:] if t != pad_id], float(score))
            for row, score in zip(ys.tolist(), scores[0].tolist()) if score > -math.inf]
