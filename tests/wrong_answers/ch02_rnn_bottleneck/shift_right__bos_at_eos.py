# <bos> put at the position of each <eos> instead of the position after it.
def shift_right(targets, bos_id, eos_id, pad_id):
    inputs = torch.cat([torch.full_like(targets[:, :1], bos_id), targets[:, :-1]], dim=1)
    return inputs.masked_fill(targets == eos_id, bos_id).masked_fill(targets == pad_id, pad_id)
