# Wrong answer: the columns of all heads reordered as one head.
def to_interleaved(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The projection (d_model, h d_head) for interleaved RoPE that gives the scores weight gives with half-split RoPE."""
    d_model, width = weight.shape
    if num_heads < 1 or width % num_heads or (width // num_heads) % 2:
        raise ValueError(f"need num_heads heads of an even size in {width} columns, got num_heads={num_heads}")
    d_head = width // num_heads
    halves = weight.reshape(d_model, 1, 2, width // 2)
    return halves.transpose(-1, -2).reshape(d_model, width).clone()
