# Loops over the layers and adds the bytes of each layer's two cache tensors (B, n_kv, min(T, w), d_k) via math.prod,
# with the grouping checked first.
def kv_cache_bytes(layer_windows: list[int | None], batch: int, seq_len: int, d_model: int, n_heads: int,
                   n_kv_heads: int | None = None, bytes_per_number: int = 2) -> int:
    """Bytes of the cached keys and values of all layers when seq_len tokens have been seen."""
    if n_kv_heads is None:
        n_kv_heads = n_heads
    if n_heads % n_kv_heads != 0:
        raise ValueError(f"{n_kv_heads} key/value heads do not divide {n_heads} query heads")
    if d_model % n_heads != 0:
        raise ValueError(f"{n_heads} heads do not divide d_model={d_model}")
    d_k = d_model // n_heads
    total = 0
    for window in layer_windows:
        held = seq_len if window is None else min(seq_len, window)
        one_tensor = math.prod((batch, n_kv_heads, held, d_k))   # the keys (the values are as many)
        total += 2 * one_tensor * bytes_per_number
    return total
