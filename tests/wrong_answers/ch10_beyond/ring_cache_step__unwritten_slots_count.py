# Wrong answer: every slot attended to, also those never written.
def ring_cache_step(x_t: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor, W_v: torch.Tensor,
                    cache_k: torch.Tensor, cache_v: torch.Tensor, position: int,
                    num_heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of sliding-window self-attention with a fixed-size ring-buffer cache.

    x_t (B, 1, d_model) at `position`; caches (B, h, w, d_k) -> (out_t (B, 1, d_model), caches (B, h, w, d_k)).
    """
    B, _, d_model = x_t.shape
    window, d_head = cache_k.shape[2], d_model // num_heads

    def heads(projected):  # (B, 1, d_model) -> (B, h, d_k)
        return projected.reshape(B, num_heads, d_head)

    slot = position % window
    cache_k, cache_v = cache_k.clone(), cache_v.clone()
    cache_k[:, :, slot] = heads(x_t @ W_k)
    cache_v[:, :, slot] = heads(x_t @ W_v)
    written = torch.arange(window, device=x_t.device) <= position  # slots that hold one of the last w positions
    scores = torch.einsum("bhd,bhsd->bhs", heads(x_t @ W_q), cache_k) / math.sqrt(d_head)
    weights = torch.softmax(scores, dim=-1)  # (B, h, w)
    mixed = torch.einsum("bhs,bhsd->bhd", weights, cache_v)
    return mixed.reshape(B, 1, d_model), cache_k, cache_v
