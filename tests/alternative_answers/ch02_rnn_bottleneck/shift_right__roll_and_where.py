# torch.roll along time with column 0 marked as a start, then nested torch.where (pad, else bos, else the rolled token).
def shift_right(targets: torch.Tensor, bos_id: int, eos_id: int, pad_id: int) -> torch.Tensor:
    """targets (B, T), packed sequences ending in eos_id -> decoder inputs (B, T): each sequence shifted, after its own bos_id."""
    previous = torch.roll(targets, shifts=1, dims=1)           # previous[:, t] = targets[:, t - 1] (column 0 wraps)
    starts = previous == eos_id
    starts[:, 0] = True                                        # the wrapped column is always a start
    bos = torch.full_like(targets, bos_id)
    pad = torch.full_like(targets, pad_id)
    return torch.where(targets == pad_id, pad, torch.where(starts, bos, previous))
