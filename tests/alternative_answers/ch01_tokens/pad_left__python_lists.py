# Builds ids, mask and positions row by row as Python lists, converted once with torch.tensor.
def pad_left(sequences: list[list[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pad B sequences on the left to (B, T); return ids, mask (True = real token) and positions."""
    if len(sequences) < 1:
        raise ValueError("pad_left: a batch needs at least one sequence")
    rows = [[int(token) for token in sequence] for sequence in sequences]
    T = max(len(row) for row in rows)
    ids, mask, positions = [], [], []
    for row in rows:
        n_pad = T - len(row)
        ids.append([pad_id] * n_pad + row)
        mask.append([False] * n_pad + [True] * len(row))
        positions.append([0] * n_pad + list(range(len(row))))
    return (torch.tensor(ids, dtype=torch.long).reshape(len(rows), T),
            torch.tensor(mask, dtype=torch.bool).reshape(len(rows), T),
            torch.tensor(positions, dtype=torch.long).reshape(len(rows), T))
