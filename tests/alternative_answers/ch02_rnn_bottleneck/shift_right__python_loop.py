# A Python loop over every row and position (tolist), tracking the previous token, instead of tensor slices and masks.
def shift_right(targets: torch.Tensor, bos_id: int, eos_id: int, pad_id: int) -> torch.Tensor:
    """targets (B, T), packed sequences ending in eos_id -> decoder inputs (B, T): each sequence shifted, after its own bos_id."""
    rows = []
    for row in targets.tolist():
        inputs = []
        previous = None                                        # None: nothing read yet in this row
        for token in row:
            if token == pad_id:
                inputs.append(pad_id)
            elif previous is None or previous == eos_id:
                inputs.append(bos_id)                          # a sequence starts here
            else:
                inputs.append(previous)
            previous = token
        rows.append(inputs)
    return torch.tensor(rows, dtype=targets.dtype).reshape(targets.shape)
