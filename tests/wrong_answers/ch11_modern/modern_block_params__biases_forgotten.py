# Wrong answer: bias=True adds nothing.
def modern_block_params(d_model: int, num_heads: int, d_ff: int, num_kv_heads: int | None = None,
                        norm: str = "rms", feed_forward: str = "swiglu", bias: bool = False) -> int:
    """Parameters of a ModernBlock with these switches, counted without building it."""
    num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
    if d_model % num_heads or num_heads % num_kv_heads:
        raise ValueError(f"need num_heads | d_model and num_kv_heads | num_heads, got d_model={d_model}, "
                         f"num_heads={num_heads}, num_kv_heads={num_kv_heads}")
    kv_width = num_kv_heads * (d_model // num_heads)
    norms = 2 * (d_model if norm == "rms" else 2 * d_model)
    projected = d_model + 2 * kv_width  # the features of queries, keys and values
    attention = d_model * projected + d_model * d_model + 0
    hidden_maps = 2 if feed_forward == "swiglu" else 1  # maps d_model -> d_ff
    ffn = (hidden_maps + 1) * d_model * d_ff + 0
    return int(norms + attention + ffn)
