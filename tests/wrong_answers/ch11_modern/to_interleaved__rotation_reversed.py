# Wrong answer: feature i + d/2 sent to 2i and i to 2i + 1: each pair turns the other way.
def to_interleaved(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The projection (d_model, h d_head) for interleaved RoPE that gives the scores weight gives with half-split RoPE."""
    d_model, width = weight.shape
    if num_heads < 1 or width % num_heads or (width // num_heads) % 2:
        raise ValueError(f"need num_heads heads of an even size in {width} columns, got num_heads={num_heads}")
    d_head = width // num_heads
    halves = weight.reshape(d_model, num_heads, 2, d_head // 2)
    return halves.flip(-2).transpose(-1, -2).reshape(d_model, width).clone()
