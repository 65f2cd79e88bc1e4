# Checks min/max first, argsorts the ids and sums each run of equal ids in a Python loop: no unique/index_add_.
def embedding_backward(ids: torch.Tensor, grad_output: torch.Tensor, n_vocab: int,
                       padding_idx: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The sparse dL/dW of X = W[ids]: the ids that occur, rows (R,), and their gradients (R, d_model)."""
    d_model = grad_output.shape[-1]
    flat_ids = ids.flatten()
    flat_grads = grad_output.reshape(-1, d_model)
    if flat_ids.numel() > 0:
        low, high = int(flat_ids.min()), int(flat_ids.max())
        if low < 0:
            raise ValueError(f"id {low} is negative: ids must lie in [0, n_vocab={n_vocab})")
        if high >= n_vocab:
            raise ValueError(f"id {high} is not below n_vocab={n_vocab}")
    order = torch.argsort(flat_ids, stable=True)
    sorted_ids, sorted_grads = flat_ids[order], flat_grads[order]
    rows, sums = [], []
    start = 0
    while start < len(sorted_ids):
        end = start
        while end < len(sorted_ids) and sorted_ids[end] == sorted_ids[start]:
            end += 1
        token = int(sorted_ids[start])
        if token != padding_idx:
            rows.append(token)
            sums.append(sorted_grads[start:end].sum(dim=0))           # E^T dL/dX: every occurrence adds
        start = end
    if not rows:
        return torch.zeros(0, dtype=torch.long), grad_output.new_zeros(0, d_model)
    return torch.tensor(rows, dtype=torch.long), torch.stack(sums)
