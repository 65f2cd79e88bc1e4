# Counts the global layers and the windowed layers' tokens apart, and sizes a token as d_model * n_kv / n_heads (divmod
# checks) instead of n_kv * d_k.
def kv_cache_bytes(layer_windows: list[int | None], batch: int, seq_len: int, d_model: int, n_heads: int,
                   n_kv_heads: int | None = None, bytes_per_number: int = 2) -> int:
    """Bytes of the cached keys and values of all layers when seq_len tokens have been seen."""
    kv = n_heads if n_kv_heads is None else n_kv_heads
    _, head_rest = divmod(d_model, n_heads)
    _, group_rest = divmod(n_heads, kv)
    if head_rest or group_rest:
        raise ValueError("n_heads must divide d_model and n_kv_heads must divide n_heads")
    n_global = layer_windows.count(None)
    windowed_tokens = sum(min(seq_len, w) for w in layer_windows if w is not None)
    tokens = n_global * seq_len + windowed_tokens
    kv_features = d_model * kv // n_heads          # key features per token and layer (= n_kv * d_k)
    return 2 * kv_features * tokens * batch * bytes_per_number
