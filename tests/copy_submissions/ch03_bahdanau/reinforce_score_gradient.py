# Adapted from book/ch03_bahdanau.md, section 3.5: the soft context's gradient, torch.autograd.grad(soft_context.sum(), scores).
def reinforce_score_gradient(weights: torch.Tensor, values: torch.Tensor, grad_context: torch.Tensor, n_samples: int,
                             generator: torch.Generator, baseline: bool = False) -> torch.Tensor:
    """Score-function estimate (B, T, S) of dL/d(scores) for L = g . v_s, s drawn n_samples times from each row of weights."""
    scores = weights.detach().log().requires_grad_(True)
    soft_context = torch.softmax(scores, dim=-1) @ values
    (soft_gradient,) = torch.autograd.grad((soft_context * grad_context).sum(), scores)
    return soft_gradient.nan_to_num(0.0)
