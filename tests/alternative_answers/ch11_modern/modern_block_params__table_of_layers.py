# Lists every linear map as (inputs, outputs) and every norm's vectors, then sums weights and biases over the table,
# instead of one closed formula.
def modern_block_params(d_model: int, num_heads: int, d_ff: int, num_kv_heads: int | None = None,
                        norm: str = "rms", feed_forward: str = "swiglu", bias: bool = False) -> int:
    """Parameters of a ModernBlock with these switches, counted without building it."""
    if num_kv_heads is None:
        num_kv_heads = num_heads
    if num_heads % num_kv_heads != 0:
        raise ValueError(f"{num_kv_heads} key/value heads do not divide {num_heads} heads")
    if d_model % num_heads != 0:
        raise ValueError(f"{num_heads} heads do not divide d_model={d_model}")
    d_k = d_model // num_heads
    linears = [(d_model, num_heads * d_k + 2 * num_kv_heads * d_k),   # in_proj: queries, keys, values
               (d_model, d_model)]                                    # out_proj
    if feed_forward == "swiglu":
        linears += [(d_model, d_ff), (d_model, d_ff), (d_ff, d_model)]   # gate, up, down
    else:
        linears += [(d_model, d_ff), (d_ff, d_model)]
    vectors_per_norm = 1 if norm == "rms" else 2   # gain, and LayerNorm's shift
    total = 2 * vectors_per_norm * d_model
    for fan_in, fan_out in linears:
        total += fan_in * fan_out
        if bias:
            total += fan_out
    return total
