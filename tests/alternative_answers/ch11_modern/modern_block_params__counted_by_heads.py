# Counts attention per head (h query heads and 2 h_kv key/value heads of d_k columns, then W_O) and the network by its
# d_ff-wide maps, with bias and norms added at the end.
def modern_block_params(d_model: int, num_heads: int, d_ff: int, num_kv_heads: int | None = None,
                        norm: str = "rms", feed_forward: str = "swiglu", bias: bool = False) -> int:
    """Parameters of a ModernBlock with these switches, counted without building it."""
    h_kv = num_heads if num_kv_heads is None else num_kv_heads
    if d_model % num_heads != 0 or num_heads % h_kv != 0:
        raise ValueError("num_heads must divide d_model and num_kv_heads must divide num_heads")
    d_k = d_model // num_heads
    projected_heads = num_heads + 2 * h_kv
    weights = projected_heads * d_k * d_model + d_model * d_model
    wide_maps = 2 if feed_forward == "swiglu" else 1
    weights += wide_maps * d_model * d_ff + d_ff * d_model
    biases = (projected_heads * d_k + d_model + wide_maps * d_ff + d_model) if bias else 0
    norm_params = 2 * d_model * (2 if norm == "layer" else 1)
    return weights + biases + norm_params
