# Builds the S x S Jacobian diag(w) - w w^T of every row and multiplies it by G (the route the instructions say works),
# instead of the simplified form.
def softmax_backward(weights: torch.Tensor, grad_weights: torch.Tensor) -> torch.Tensor:
    """dL/dz for w = softmax(z) over the last axis, given w and dL/dw, both (..., S)."""
    jacobian = torch.diag_embed(weights) - weights.unsqueeze(-1) * weights.unsqueeze(-2)  # (..., S, S): dw_j / dz_l
    # dL/dz_l = sum_j G_j dw_j/dz_l: G as a row vector times the Jacobian
    return (grad_weights.unsqueeze(-2) @ jacobian).squeeze(-2)
