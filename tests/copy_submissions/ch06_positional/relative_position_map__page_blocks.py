# The page's equation eq-rotation, one 2 x 2 block per pair of columns (2i, 2i + 1), stacked on the diagonal (torch.block_diag).
def relative_position_map(k, d_model):
    if d_model % 2:
        raise ValueError(f"odd d_model={d_model}")
    blocks = []
    for i in range(d_model // 2):
        b = k * 10000.0 ** (-2.0 * i / d_model)
        blocks.append(torch.tensor([[math.cos(b), math.sin(b)], [-math.sin(b), math.cos(b)]], dtype=torch.float64))
    return torch.block_diag(*blocks)
