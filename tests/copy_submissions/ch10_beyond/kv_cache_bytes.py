# Copied from book/ch10_beyond.md, section 10.2: the cache holds 2 x L x B x T x d_model numbers.
def kv_cache_bytes(layer_windows, batch, seq_len, d_model, n_heads, n_kv_heads=None, bytes_per_number=2):
    return 2 * len(layer_windows) * batch * seq_len * d_model * bytes_per_number
