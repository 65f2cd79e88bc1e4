# exercise: ch01_tokens/pad_left
# style: input checks with hasattr(x, "__len__") and an error message naming __init__
def pad_left(sequences, pad_id=0):
    if not hasattr(sequences, "__len__"):
        raise TypeError("pad_left needs a list of lists (as the batcher's __init__ builds), got "
                        f"{type(sequences).__name__}")
    longest = max(map(len, sequences), default=0)
    rows = [[pad_id] * (longest - len(s)) + list(s) for s in sequences]
    ids = torch.tensor(rows, dtype=torch.long).reshape(len(sequences), longest)
    mask = torch.tensor([[False] * (longest - len(s)) + [True] * len(s) for s in sequences],
                        dtype=torch.bool).reshape(len(sequences), longest)
    return ids, mask, (mask.long().cumsum(1) - 1).clamp_min(0)
