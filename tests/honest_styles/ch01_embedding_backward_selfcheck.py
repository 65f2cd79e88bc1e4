# exercise: ch01_tokens/embedding_backward
# style: the answer by hand, then an autograd self-check in a cell of its own
def embedding_backward(ids, grad_output, n_vocab, padding_idx=None):
    flat = ids.flatten()
    if flat.numel() and not bool(((flat >= 0) & (flat < n_vocab)).all()):
        raise ValueError(f"an id is outside [0, n_vocab = {n_vocab}): {flat.tolist()}")
    rows = torch.unique(flat, sorted=True)
    if padding_idx is not None:
        rows = rows[rows != padding_idx]
    match = (flat[None, :] == rows[:, None]).to(grad_output.dtype)
    return rows, match @ grad_output.reshape(flat.numel(), -1)
# %%
table = torch.randn(10, 3, requires_grad=True)
ids = torch.tensor([[1, 3, 1]])
out = table[ids]
upstream = torch.randn_like(out)
out.backward(upstream)
rows, grads = embedding_backward(ids, upstream, 10)
print(torch.allclose(table.grad[rows], grads))
