# A lazy combination: book/ch11_modern.md's cache formula (section 11.5: 2 L B S h_kv d_k numbers,
# as its experiment computes it) solved for S, with the exercise's n_kv_heads=None default.
def longest_context(budget_bytes, layer_windows, batch, d_model, n_heads, n_kv_heads=None, bytes_per_number=2):
    h_kv = n_heads if n_kv_heads is None else n_kv_heads
    return budget_bytes // (2 * len(layer_windows) * batch * h_kv * (d_model // n_heads) * bytes_per_number)
