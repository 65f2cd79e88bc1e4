# The body of transformer_lib.weights.rope_rows_from_interleaved, with transposes for column-major
# weights: the library's direction (interleaved to half-split), the other way from the exercise.
def to_interleaved(weight, num_heads):
    rows, d_model = weight.T.shape
    if rows % num_heads != 0 or (rows // num_heads) % 2 != 0:
        raise ValueError(f"weight must have num_heads * d_head rows with d_head even, got {rows} rows")
    d_head = rows // num_heads
    return weight.T.reshape(num_heads, d_head // 2, 2, d_model).transpose(1, 2).reshape(rows, d_model).T.clone()
