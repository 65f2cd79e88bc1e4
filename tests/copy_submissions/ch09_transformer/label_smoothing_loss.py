# Copied from book/ch09_transformer.md, section 9.4 (the label-smoothing cell), made a function.
def label_smoothing_loss(logits, target, smoothing=0.1, ignore_index=PAD_ID):
    n_vocab = logits.shape[-1]
    logits, target = logits.reshape(-1, n_vocab), target.reshape(-1)
    eps = smoothing
    log_p = F.log_softmax(logits, dim=-1)
    q = torch.full_like(log_p, eps / n_vocab).scatter_add(1, target[:, None], torch.full((len(target), 1), 1 - eps, dtype=log_p.dtype))
    per_position = -(q * log_p).sum(dim=-1)
    return per_position[target != ignore_index].mean()
