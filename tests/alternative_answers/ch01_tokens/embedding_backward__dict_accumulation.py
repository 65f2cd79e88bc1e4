# Pure Python: sums each position's gradient in a dict keyed by id (range checked on the way), then sorts the keys.
def embedding_backward(ids: torch.Tensor, grad_output: torch.Tensor, n_vocab: int,
                       padding_idx: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The sparse dL/dW of X = W[ids]: the ids that occur, rows (R,), and their gradients (R, d_model)."""
    d_model = grad_output.shape[-1]
    grads = grad_output.reshape(-1, d_model)
    totals: dict[int, torch.Tensor] = {}
    for position, token in enumerate(ids.reshape(-1).tolist()):
        if not 0 <= token < n_vocab:
            raise ValueError(f"id {token} is outside [0, n_vocab) with n_vocab = {n_vocab}")
        if token == padding_idx:
            continue
        totals[token] = totals[token] + grads[position] if token in totals else grads[position].clone()
    rows = sorted(totals)
    grad_rows = torch.stack([totals[token] for token in rows]) if rows else grad_output.new_zeros(0, d_model)
    return torch.tensor(rows, dtype=torch.long), grad_rows
