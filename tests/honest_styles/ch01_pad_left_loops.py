# exercise: ch01_tokens/pad_left
# style: plain loops, a check under `if __name__ == "__main__":`
def pad_left(sequences, pad_id=0):
    """Left-pad each sequence to the longest; the mask is True on real tokens."""
    longest = max((len(s) for s in sequences), default=0)
    ids = torch.full((len(sequences), longest), pad_id, dtype=torch.long)
    mask = torch.zeros(len(sequences), longest, dtype=torch.bool)
    for row, sequence in enumerate(sequences):
        if sequence:
            ids[row, longest - len(sequence):] = torch.tensor(sequence)
            mask[row, longest - len(sequence):] = True
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
    return ids, mask, positions


if __name__ == "__main__":
    print(pad_left([[1, 2], [3]]))
