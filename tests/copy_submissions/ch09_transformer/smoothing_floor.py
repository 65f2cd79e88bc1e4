# Copied from book/ch09_transformer.md, section 4: the plotted loss at its marked minimum
# p(y) = 1 - eps + eps / C (the rest spread over the other classes), and the page's smoothed target q.
def smoothing_floor(smoothing, n_classes):
    C, eps_ = n_classes, smoothing
    p_true = torch.tensor(1 - eps_ + eps_ / C, dtype=torch.float64)
    loss = -((1 - eps_ + eps_ / C) * p_true.log() + (C - 1) * (eps_ / C) * ((1 - p_true) / (C - 1)).log())
    return float(loss)


def floor_logits(target, smoothing, n_classes):
    eps, n_vocab = smoothing, n_classes
    log_p = torch.zeros(len(target), n_vocab, dtype=torch.float64)
    q = torch.full_like(log_p, eps / n_vocab).scatter_add(1, target[:, None], torch.full((len(target), 1), 1 - eps, dtype=torch.float64))
    return q
