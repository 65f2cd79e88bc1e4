# Lazy combination: the page's section 1.4, "Measured (a)" line E = F.one_hot(ids, num_classes=n_vocab), times dL/dX (the formula the task gives), plus a range check and the rows that occur.
def embedding_backward(ids, grad_output, n_vocab, padding_idx=None):
    if int(ids.min()) < 0 or int(ids.max()) >= n_vocab:
        raise ValueError(f"ids must lie in [0, {n_vocab})")
    E = F.one_hot(ids, num_classes=n_vocab).to(grad_output.dtype)               # (B, T, n_vocab)
    dense = E.reshape(-1, n_vocab).T @ grad_output.reshape(-1, grad_output.shape[-1])
    if padding_idx is not None:
        dense[padding_idx] = 0
    rows = torch.unique(ids)
    rows = rows[rows != padding_idx] if padding_idx is not None else rows
    return rows, dense[rows]
