# exercise: ch10_beyond/kv_cache_bytes
# style: a generator expression, min() with None windows
def kv_cache_bytes(layer_windows, batch, seq_len, d_model, n_heads, bytes_per_value=2):
    kept = sum(seq_len if window is None else min(window, seq_len) for window in layer_windows)
    return 2 * batch * kept * d_model * bytes_per_value
