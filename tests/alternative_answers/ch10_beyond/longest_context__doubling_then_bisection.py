# Searches for the length (doubling, then bisection) on the cache size written out inline, instead of walking the pieces
# between the windows.
def longest_context(budget_bytes: int, layer_windows: list[int | None], batch: int, d_model: int, n_heads: int,
                    n_kv_heads: int | None = None, bytes_per_number: int = 2) -> int | float:
    """The largest seq_len whose cache fits in budget_bytes, or math.inf when every length fits."""
    kv = n_heads if n_kv_heads is None else n_kv_heads
    token_layer_bytes = 2 * batch * kv * (d_model // n_heads) * bytes_per_number

    def cache_bytes(length):
        return token_layer_bytes * sum(length if w is None else min(length, w) for w in layer_windows)

    if None not in layer_windows and cache_bytes(max(layer_windows)) <= budget_bytes:
        return math.inf  # the cache is full at the longest window and never grows again
    fits, too_long = 0, 1
    while cache_bytes(too_long) <= budget_bytes:
        fits, too_long = too_long, 2 * too_long
    while too_long - fits > 1:  # cache_bytes(fits) <= budget < cache_bytes(too_long)
        middle = (fits + too_long) // 2
        if cache_bytes(middle) <= budget_bytes:
            fits = middle
        else:
            too_long = middle
    return fits
