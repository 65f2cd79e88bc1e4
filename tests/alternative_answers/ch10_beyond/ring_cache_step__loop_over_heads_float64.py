# Loops over the heads with column slices of the weights, computes the scores in float64 with the window mask as
# torch.where on a list of valid slots, and writes the ring with index_copy.
def ring_cache_step(x_t: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor, W_v: torch.Tensor,
                    cache_k: torch.Tensor, cache_v: torch.Tensor, position: int,
                    num_heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of sliding-window self-attention with a fixed-size ring-buffer cache.

    x_t (B, 1, d_model) at `position`; caches (B, h, w, d_k) -> (out_t (B, 1, d_model), caches (B, h, w, d_k)).
    """
    B, _, d_model = x_t.shape
    w = cache_k.shape[2]
    d_k = d_model // num_heads
    x = x_t[:, 0]                                                  # (B, d_model)
    slot = torch.tensor([position % w])
    # the slots holding positions position - w + 1 .. position (those >= 0)
    valid = torch.tensor([any(p % w == j for p in range(max(0, position - w + 1), position + 1)) for j in range(w)])
    new_k = cache_k.index_copy(2, slot, (x @ W_k).reshape(B, num_heads, 1, d_k))
    new_v = cache_v.index_copy(2, slot, (x @ W_v).reshape(B, num_heads, 1, d_k))
    head_outputs = []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)
        q_i = (x @ W_q[:, cols]).double()                          # (B, d_k)
        scores = (new_k[:, i].double() @ q_i.unsqueeze(-1)).squeeze(-1) / math.sqrt(d_k)   # (B, w)
        scores = torch.where(valid, scores, torch.tensor(float("-inf"), dtype=torch.float64))
        weights = torch.softmax(scores, dim=-1)
        head_outputs.append((weights.unsqueeze(1) @ new_v[:, i].double()).squeeze(1))   # (B, d_k)
    out = torch.cat(head_outputs, dim=-1).to(x_t.dtype).unsqueeze(1)
    return out, new_k, new_v
