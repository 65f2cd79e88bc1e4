# Copied from transformer_lib/attention.py, AdditiveAttention.forward (printed on book/ch03_bahdanau.md), with the nn.Linear layers written as W_q, W_k, w_v.
def coverage_attention(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, W_q: torch.Tensor,
                       W_k: torch.Tensor, w_c: torch.Tensor, w_v: torch.Tensor,
                       mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Additive attention whose score also sees each key's coverage (the weight earlier steps gave it)."""
    if mask is not None:
        mask = mask[:, None, :]
    projected_keys = keys @ W_k
    features = torch.tanh((query @ W_q).unsqueeze(2) + projected_keys.unsqueeze(1))  # (B, T, S, d_a)
    scores = features @ w_v                                                          # (B, T, S)
    weights = masked_softmax(scores, mask)
    return weights @ values, weights
