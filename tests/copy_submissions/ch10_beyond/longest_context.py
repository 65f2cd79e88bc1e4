# Copied from book/ch10_beyond.md, section 10.2 (the cache holds 2 x L x B x T x d_model numbers),
# solved for T.
def longest_context(budget_bytes, layer_windows, batch, d_model, n_heads, n_kv_heads=None, bytes_per_number=2):
    return budget_bytes // (2 * len(layer_windows) * batch * d_model * bytes_per_number)
