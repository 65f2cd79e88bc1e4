# Builds the softmax Jacobian diag(a) - a a^T (B, T, S, S) and multiplies it by dL/da = g values^T.
def attention_score_gradient(weights: torch.Tensor, values: torch.Tensor, grad_context: torch.Tensor) -> torch.Tensor:
    """dL/d(scores) (B, T, S) of the context weights @ values, given weights (B, T, S), values (B, S, d_v), dL/dcontext (B, T, d_v)."""
    grad_weights = grad_context @ values.transpose(1, 2)                        # (B, T, S): dL/da
    jacobian = torch.diag_embed(weights) - weights[..., :, None] * weights[..., None, :]   # da_i/de_j, symmetric
    return (jacobian @ grad_weights[..., None]).squeeze(-1)                     # sum_i dL/da_i da_i/de_j
