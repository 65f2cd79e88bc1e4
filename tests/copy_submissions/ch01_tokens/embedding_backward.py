# Adapted from book/ch01_tokens.md, section 1.4: X_lookup.sum().backward() on an nn.Embedding, then the rows of its weight.grad that occur.
def embedding_backward(ids: torch.Tensor, grad_output: torch.Tensor, n_vocab: int,
                       padding_idx: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The sparse dL/dW of X = W[ids]: the ids that occur, rows (R,), and their gradients (R, d_model)."""
    embedding = torch.nn.Embedding(n_vocab, grad_output.shape[-1], padding_idx=padding_idx).to(grad_output.dtype)
    X_lookup = embedding(ids)
    (X_lookup * grad_output).sum().backward()
    rows = torch.unique(ids)
    if padding_idx is not None:
        rows = rows[rows != padding_idx]
    return rows, embedding.weight.grad[rows]
