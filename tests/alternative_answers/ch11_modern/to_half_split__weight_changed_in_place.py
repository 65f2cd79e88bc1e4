# The columns reordered in the weight itself (weight.copy_(...)) and the weight returned: the right scores, but the caller's weight is changed.
def to_half_split(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The projection (d_model, h d_head) for half-split RoPE that gives the scores weight gives with interleaved RoPE."""
    d_model, width = weight.shape
    if num_heads < 1 or width % num_heads or (width // num_heads) % 2:
        raise ValueError(f"need num_heads heads of an even size in {width} columns, got num_heads={num_heads}")
    d_head = width // num_heads
    pairs = weight.reshape(d_model, num_heads, d_head // 2, 2)
    return weight.copy_(pairs.transpose(-1, -2).reshape(d_model, width))
