# Wrong answer: math.inf as soon as one layer has a window.
def longest_context(budget_bytes: int, layer_windows: list[int | None], batch: int, d_model: int, n_heads: int,
                    n_kv_heads: int | None = None, bytes_per_number: int = 2) -> int | float:
    """The largest seq_len whose cache fits in budget_bytes, or math.inf when every length fits."""
    n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
    per_token = 2 * batch * n_kv_heads * (d_model // n_heads) * bytes_per_number  # one layer, one token
    if any(window is not None for window in layer_windows):
        return math.inf  # every layer is full at its window: the cache never grows past this
    # the cache grows by per_token x (layers whose window is not full yet) per token: piecewise linear
    # in seq_len, with corners at the windows; walk the pieces in order
    corners = sorted({w for w in layer_windows if w is not None})
    start, used = 0, 0  # at seq_len = start the cache holds `used` bytes
    for end in corners + [None]:
        growing = sum(1 for w in layer_windows if w is None or w > start)  # layers still growing after start
        if end is not None and used + per_token * growing * (end - start) <= budget_bytes:
            start, used = end, used + per_token * growing * (end - start)
            continue
        return start + (budget_bytes - used) // (per_token * growing)
