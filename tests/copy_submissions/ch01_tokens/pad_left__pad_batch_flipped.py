# Lazy combination: the library's pad_batch and lengths_to_mask (section 1.3 of the page) on the reversed sequences, flipped back, with positions as the column index at the real tokens.
def pad_left(sequences, pad_id=0):
    ids, lengths = pad_batch([list(reversed([int(t) for t in s])) for s in sequences], pad_id)
    mask = lengths_to_mask(lengths, ids.shape[1]).flip(1)
    return ids.flip(1), mask, torch.arange(ids.shape[1]) * mask
