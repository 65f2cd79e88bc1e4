# Copied from book/ch10_beyond.md, section 10.2 (equation eq-kv-cache with the printed KVCache.extend:
# the new key and value appended to the cache), the window read from the cache it is given.
def ring_cache_step(x_t, W_q, W_k, W_v, cache_k, cache_v, position, num_heads):
    B, _, d_model = x_t.shape
    d_k = d_model // num_heads
    q = (x_t @ W_q).reshape(B, 1, num_heads, d_k).transpose(1, 2)
    key = (x_t @ W_k).reshape(B, 1, num_heads, d_k).transpose(1, 2)
    value = (x_t @ W_v).reshape(B, 1, num_heads, d_k).transpose(1, 2)
    key, value = torch.cat([cache_k, key], dim=-2), torch.cat([cache_v, value], dim=-2)
    weights = torch.softmax(q @ key.transpose(-2, -1) / math.sqrt(d_k), dim=-1)
    out = (weights @ value).transpose(1, 2).reshape(B, 1, d_model)
    return out, key, value
