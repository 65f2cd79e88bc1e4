# exercise: ch01_tokens/embedding_backward
# style: torch.unique and index_add_, a docstring that mentions __init__ and autograd
def embedding_backward(ids, grad_output, n_vocab, padding_idx=None):
    """Like nn.Embedding's backward (see its __init__'s sparse=True): no autograd here."""
    if ids.numel() and (ids.min() < 0 or ids.max() >= n_vocab):
        bad = ids[(ids < 0) | (ids >= n_vocab)][0].item()
        raise ValueError(f"id {bad} is outside [0, {n_vocab})")
    flat_ids = ids.reshape(-1)
    flat_grad = grad_output.reshape(flat_ids.numel(), -1)
    rows, inverse = torch.unique(flat_ids, return_inverse=True)
    grad_rows = torch.zeros(len(rows), flat_grad.shape[1], dtype=grad_output.dtype)
    grad_rows.index_add_(0, inverse, flat_grad)
    if padding_idx is not None:
        keep = rows != padding_idx
        rows, grad_rows = rows[keep], grad_rows[keep]
    return rows, grad_rows
