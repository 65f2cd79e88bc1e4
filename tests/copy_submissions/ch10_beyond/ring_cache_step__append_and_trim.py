# A lazy combination: the page's KVCache.extend (section 10.2: torch.cat of the new key and value)
# trimmed back to the last w entries, and the library's scaled_dot_product_attention with a mask of
# the entries written so far: a shift register, not a ring.
def ring_cache_step(x_t, W_q, W_k, W_v, cache_k, cache_v, position, num_heads):
    B, _, d_model = x_t.shape
    window, d_k = cache_k.shape[2], d_model // num_heads
    q, k, v = ((x_t @ W).reshape(B, 1, num_heads, d_k).transpose(1, 2) for W in (W_q, W_k, W_v))
    cache_k = torch.cat([cache_k, k], dim=2)[:, :, -window:]
    cache_v = torch.cat([cache_v, v], dim=2)[:, :, -window:]
    written = torch.arange(window) >= window - 1 - position
    out, _ = scaled_dot_product_attention(q, cache_k, cache_v, written[None, :])
    return out.transpose(1, 2).reshape(B, 1, d_model), cache_k, cache_v
