# Copied from transformer_lib/tokens.py, pad_batch and lengths_to_mask (section 1.3 of the page), renamed; positions from the mask.
def pad_left(sequences: list[list[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pad B sequences on the left to (B, T); return ids, mask (True = real token) and positions."""
    if len(sequences) == 0:
        raise ValueError("pad_batch needs at least one sequence, got an empty batch")
    rows = [list(int(i) for i in s) for s in sequences]
    lengths = [len(row) for row in rows]
    width = max(lengths)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    lengths = torch.tensor(lengths, dtype=torch.long)
    mask = torch.arange(width)[None, :] < lengths[:, None]
    positions = torch.arange(width)[None, :].expand(len(rows), width) * mask
    return ids, mask, positions
