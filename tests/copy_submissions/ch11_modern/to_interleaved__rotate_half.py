# The page's half-split layout (section 11.2: x1, x2 = the two halves, rotate_half gives
# cat(-x2, x1)) applied to the columns of the weight, with the given ValueError check.
def to_interleaved(weight, num_heads):
    if weight.shape[1] % num_heads or (weight.shape[1] // num_heads) % 2:
        raise ValueError(f"need heads of an even size, got {weight.shape[1]} columns and num_heads={num_heads}")
    x1, x2 = weight.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)
