# Padding not restored: the shifted tokens (the last <eos>) show through at the first padded position.
def shift_right(targets, bos_id, eos_id, pad_id):
    starts = torch.cat([torch.ones_like(targets[:, :1], dtype=torch.bool), targets[:, :-1] == eos_id], dim=1)
    shifted = torch.cat([targets[:, :1], targets[:, :-1]], dim=1)
    return shifted.masked_fill(starts & (targets != pad_id), bos_id)
