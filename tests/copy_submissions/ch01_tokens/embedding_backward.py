# Adapted from book/ch01_tokens.md, section 4: X_lookup.sum().backward() on an nn.Embedding, then its weight.grad.
def embedding_backward(ids: torch.Tensor, grad_output: torch.Tensor, n_vocab: int,
                       padding_idx: int | None = None) -> torch.Tensor:
    """dL/dW (n_vocab, d_model) of X = W[ids], given dL/dX (ids.shape + (d_model,))."""
    embedding = torch.nn.Embedding(n_vocab, grad_output.shape[-1], padding_idx=padding_idx).to(grad_output.dtype)
    X_lookup = embedding(ids)
    (X_lookup * grad_output).sum().backward()
    return embedding.weight.grad
