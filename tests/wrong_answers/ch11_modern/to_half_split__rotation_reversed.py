# Wrong answer: feature 2i sent to i + d/2 and 2i + 1 to i: each pair turns the other way.
def to_half_split(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The projection (d_model, h d_head) for half-split RoPE that gives the scores weight gives with interleaved RoPE."""
    d_model, width = weight.shape
    if num_heads < 1 or width % num_heads or (width // num_heads) % 2:
        raise ValueError(f"need num_heads heads of an even size in {width} columns, got num_heads={num_heads}")
    d_head = width // num_heads
    # interleaved pair i = features (2i, 2i + 1) -> half-split pair i = features (i, i + d_head / 2), per head
    pairs = weight.reshape(d_model, num_heads, d_head // 2, 2)
    return pairs.flip(-1).transpose(-1, -2).reshape(d_model, width).clone()
