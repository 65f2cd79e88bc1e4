# Builds the list of source columns with a Python loop (2i <- i, 2i + 1 <- i + d_head / 2 in each head) and gathers them
# by indexing, instead of reshape and transpose.
def to_interleaved(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The projection (d_model, h d_head) for interleaved RoPE giving the scores weight gives with half-split RoPE."""
    columns = weight.shape[1]
    if num_heads <= 0:
        raise ValueError(f"num_heads must be positive, got {num_heads}")
    if columns % num_heads != 0:
        raise ValueError(f"{num_heads} heads do not divide {columns} columns")
    d_head = columns // num_heads
    if d_head % 2 != 0:
        raise ValueError(f"heads of {d_head} features cannot be split into pairs")
    half = d_head // 2
    source = []
    for head in range(num_heads):
        first = head * d_head
        for i in range(half):
            source += [first + i, first + i + half]  # interleaved pair i = half-split pair i
    return weight[:, torch.tensor(source)]  # advanced indexing copies: weight is unchanged
