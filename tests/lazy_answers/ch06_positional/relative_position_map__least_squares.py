# M fitted by least squares to the half-split table (the visible test's half_split_table) over positions 0, 25, ..., 99975.
# earns 4, then 0 once issue 50 item 2 (exercise 2's "do not fit M" checked) lands: the text says do not fit M to a table
def relative_position_map(k, d_model):
    if d_model % 2:
        raise ValueError(f"odd d_model: {d_model}")

    def table(positions):
        angle = positions[:, None] * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
        return torch.cat([angle.sin(), angle.cos()], dim=-1)

    positions = torch.arange(0, 100_000, 25, dtype=torch.float64)
    return torch.linalg.lstsq(table(positions), table(positions + k)).solution.T
