# exercise: ch02_rnn_bottleneck/shift_right
# style: list comprehensions, then one tensor
def shift_right(targets, bos_id, pad_id=0):
    rows = [[bos_id] + [t for t in row if t != pad_id][:-1] for row in targets.tolist()]
    width = targets.shape[1]
    return torch.tensor([row + [pad_id] * (width - len(row)) for row in rows], dtype=targets.dtype)
