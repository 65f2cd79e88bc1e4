# Counts the budget in whole token-layers first (budget // bytes per token-layer), then fills the layers by window size,
# smallest first.
def longest_context(budget_bytes: int, layer_windows: list[int | None], batch: int, d_model: int, n_heads: int,
                    n_kv_heads: int | None = None, bytes_per_number: int = 2) -> int | float:
    """The largest seq_len whose cache fits in budget_bytes, or math.inf when every length fits."""
    if n_kv_heads is None:
        n_kv_heads = n_heads
    per_token_layer = 2 * batch * n_kv_heads * (d_model // n_heads) * bytes_per_number
    units = budget_bytes // per_token_layer  # the cache is a whole number of token-layers
    if all(w is not None for w in layer_windows) and sum(layer_windows) <= units:
        return math.inf
    windows = sorted(math.inf if w is None else w for w in layer_windows)
    full = 0  # token-layers of the layers already full at their window
    for i, window in enumerate(windows):
        still_growing = len(windows) - i
        length = (units - full) // still_growing
        if length < window:  # this layer (and every later one) still grows at length + 1: it does not fit
            return length
        full += window
    raise AssertionError("unreachable: every window full is the math.inf case")
