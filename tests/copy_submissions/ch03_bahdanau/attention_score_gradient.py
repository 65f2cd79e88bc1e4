# Adapted from book/ch03_bahdanau.md, section 3.5: (soft_gradient,) = torch.autograd.grad(soft_context.sum(), scores).
def attention_score_gradient(weights: torch.Tensor, values: torch.Tensor, grad_context: torch.Tensor) -> torch.Tensor:
    """dL/d(scores) (B, T, S) of the context weights @ values, given weights (B, T, S), values (B, S, d_v), dL/dcontext (B, T, d_v)."""
    scores = weights.detach().log().requires_grad_(True)          # softmax(log a) = a
    alpha = torch.softmax(scores, dim=-1)
    soft_context = alpha @ values
    (soft_gradient,) = torch.autograd.grad((soft_context * grad_context).sum(), scores)
    return soft_gradient
