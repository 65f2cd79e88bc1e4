# Gets each row's sum_j w_j G_j with einsum and expands the product, w * G - w * (w . G), instead of w * (G - row sum).
def softmax_backward(weights: torch.Tensor, grad_weights: torch.Tensor) -> torch.Tensor:
    """dL/dz for w = softmax(z) over the last axis, given w and dL/dw, both (..., S)."""
    dot = torch.einsum("...s,...s->...", weights, grad_weights).unsqueeze(-1)  # (..., 1)
    return weights * grad_weights - weights * dot
