# One <bos> per row: the <eos> of a sequence is fed as the first input of the next one.
def shift_right(targets, bos_id, eos_id, pad_id):
    inputs = torch.cat([torch.full_like(targets[:, :1], bos_id), targets[:, :-1]], dim=1)
    return inputs.masked_fill(targets == pad_id, pad_id)
