# Wrong answer: a windowed layer counted with its whole window even before it fills.
def kv_cache_bytes(layer_windows: list[int | None], batch: int, seq_len: int, d_model: int, n_heads: int,
                   n_kv_heads: int | None = None, bytes_per_number: int = 2) -> int:
    """Bytes of the cached keys and values of all layers when seq_len tokens have been seen."""
    n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
    if d_model % n_heads or n_heads % n_kv_heads:
        raise ValueError(f"need n_heads | d_model and n_kv_heads | n_heads, got d_model={d_model}, "
                         f"n_heads={n_heads}, n_kv_heads={n_kv_heads}")
    numbers_per_token = 2 * n_kv_heads * (d_model // n_heads)  # a key and a value per kv head
    cached_tokens = sum(seq_len if window is None else window for window in layer_windows)
    return int(batch * cached_tokens * numbers_per_token * bytes_per_number)
