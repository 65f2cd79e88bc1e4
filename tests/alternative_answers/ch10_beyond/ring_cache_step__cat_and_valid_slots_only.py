# Rebuilds the caches with torch.cat around the slot (no clone, no in-place write) and attends only to the slots written
# so far, sliced out, with matmuls.
def ring_cache_step(x_t: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor, W_v: torch.Tensor,
                    cache_k: torch.Tensor, cache_v: torch.Tensor, position: int,
                    num_heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of sliding-window self-attention with a fixed-size ring-buffer cache.

    x_t (B, 1, d_model) at `position`; caches (B, h, w, d_k) -> (out_t (B, 1, d_model), caches (B, h, w, d_k)).
    """
    B, _, d_model = x_t.shape
    w = cache_k.shape[2]
    d_k = d_model // num_heads
    q = (x_t @ W_q).view(B, 1, num_heads, d_k).transpose(1, 2)   # (B, h, 1, d_k)
    k = (x_t @ W_k).view(B, 1, num_heads, d_k).transpose(1, 2)
    v = (x_t @ W_v).view(B, 1, num_heads, d_k).transpose(1, 2)
    slot = position % w
    new_k = torch.cat([cache_k[:, :, :slot], k, cache_k[:, :, slot + 1:]], dim=2)
    new_v = torch.cat([cache_v[:, :, :slot], v, cache_v[:, :, slot + 1:]], dim=2)
    n_valid = min(position + 1, w)  # before the ring is full only slots 0..position are written
    keys, values = new_k[:, :, :n_valid], new_v[:, :, :n_valid]
    weights = torch.softmax(q @ keys.transpose(-2, -1) / math.sqrt(d_k), dim=-1)   # (B, h, 1, n_valid)
    out = (weights @ values).transpose(1, 2).reshape(B, 1, d_model)
    return out, new_k, new_v
