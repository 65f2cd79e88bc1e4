# Positions counted from column 0 (the column index at the real tokens), not from each row's first real token.
def pad_left(sequences, pad_id=0):
    if len(sequences) == 0:
        raise ValueError("pad_left needs at least one sequence")
    rows = [torch.as_tensor(s, dtype=torch.long).reshape(-1) for s in sequences]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.bool)
    for b, row in enumerate(rows):
        ids[b, width - len(row):] = row
        mask[b, width - len(row):] = True
    return ids, mask, torch.arange(width).expand(len(rows), width) * mask
