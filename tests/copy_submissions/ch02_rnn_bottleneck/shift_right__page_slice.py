# Lazy combination: the page's section 2.3 (the shift is a slice, batch["tgt"][:, :-1]) with a <bos> column in front, and the given pad_id kept.
def shift_right(targets, bos_id, eos_id, pad_id):
    inputs = torch.cat([torch.full_like(targets[:, :1], bos_id), targets[:, :-1]], dim=1)
    return inputs.masked_fill(targets == pad_id, pad_id)
