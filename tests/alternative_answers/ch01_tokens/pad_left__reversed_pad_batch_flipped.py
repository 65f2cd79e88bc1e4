# Reversed rows through the library's pad_batch, flipped back; mask = lengths_to_mask flipped; positions by where.
def pad_left(sequences: list[list[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pad B sequences on the left to (B, T); return ids, mask (True = real token) and positions."""
    if not sequences:
        raise ValueError("a batch needs at least one sequence: pad_left got an empty list")
    reversed_rows = [list(reversed(torch.as_tensor(s, dtype=torch.long).reshape(-1).tolist())) for s in sequences]
    right_padded, lengths = pad_batch(reversed_rows, pad_id=pad_id)      # (B, T), reversed rows padded on the right
    ids = right_padded.flip(1)                                           # each row now ends at column T - 1
    T = ids.shape[1]
    mask = lengths_to_mask(lengths, T).flip(1)
    columns = torch.arange(T).expand(len(sequences), T)
    positions = torch.where(mask, columns - (T - lengths)[:, None], torch.zeros_like(columns))
    return ids, mask, positions
