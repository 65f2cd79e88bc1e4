# Wrong answer: the columns of all heads reordered as one head.
def to_half_split(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The projection (d_model, h d_head) for half-split RoPE that gives the scores weight gives with interleaved RoPE."""
    d_model, width = weight.shape
    if num_heads < 1 or width % num_heads or (width // num_heads) % 2:
        raise ValueError(f"need num_heads heads of an even size in {width} columns, got num_heads={num_heads}")
    d_head = width // num_heads
    # interleaved pair i = features (2i, 2i + 1) -> half-split pair i = features (i, i + d_head / 2), per head
    pairs = weight.reshape(d_model, 1, width // 2, 2)
    return pairs.transpose(-1, -2).reshape(d_model, width).clone()
