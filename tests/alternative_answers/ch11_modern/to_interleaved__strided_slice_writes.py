# Writes each head's two halves into the even and the odd columns of a new tensor with strided slices, head by head.
def to_interleaved(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The projection (d_model, h d_head) for interleaved RoPE giving the scores weight gives with half-split RoPE."""
    width = weight.shape[-1]
    if not (num_heads > 0 and width % num_heads == 0 and (width // num_heads) % 2 == 0):
        raise ValueError(f"cannot split {width} columns into {num_heads} heads of an even size")
    d_head = width // num_heads
    half = d_head // 2
    converted = torch.empty_like(weight)
    for head in range(num_heads):
        block = weight[:, head * d_head:(head + 1) * d_head]
        out = converted[:, head * d_head:(head + 1) * d_head]
        out[:, 0::2] = block[:, :half]   # feature 2i <- feature i
        out[:, 1::2] = block[:, half:]   # feature 2i + 1 <- feature i + d_head / 2
    return converted
