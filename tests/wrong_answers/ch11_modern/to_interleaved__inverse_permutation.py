# Wrong answer: half-split column i filled from interleaved column 2i: the conversion the other way (the library's).
def to_interleaved(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The projection (d_model, h d_head) for interleaved RoPE that gives the scores weight gives with half-split RoPE."""
    d_model, width = weight.shape
    if num_heads < 1 or width % num_heads or (width // num_heads) % 2:
        raise ValueError(f"need num_heads heads of an even size in {width} columns, got num_heads={num_heads}")
    d_head = width // num_heads
    pairs = weight.reshape(d_model, num_heads, d_head // 2, 2)
    return pairs.transpose(-1, -2).reshape(d_model, width).clone()
