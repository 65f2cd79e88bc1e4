# Builds each vector's Jacobian d x_hat / d x = (I - 1/d - x_hat x_hat^T / d) / sigma in float64 and applies it with
# einsum; x_hat from F.layer_norm.
def layer_norm_backward(x: torch.Tensor, gamma: torch.Tensor, grad_out: torch.Tensor,
                        eps: float = 1e-5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x, grad_out (..., d), gamma (d,) -> grad_x (..., d), grad_gamma (d,), grad_beta (d,)."""
    d = x.shape[-1]
    x64, g64, gamma64 = x.double(), grad_out.double(), gamma.double()
    x_hat = F.layer_norm(x64, (d,), eps=eps)                               # (..., d)
    sigma = torch.sqrt(x64.var(dim=-1, unbiased=False, keepdim=True) + eps)  # (..., 1)
    eye = torch.eye(d, dtype=torch.float64)
    jacobian = (eye - 1.0 / d - torch.einsum("...i,...j->...ij", x_hat, x_hat) / d) / sigma.unsqueeze(-1)
    u = g64 * gamma64                                                       # dl/dx_hat
    grad_x = torch.einsum("...i,...ij->...j", u, jacobian)                  # the Jacobian is symmetric
    grad_gamma = torch.einsum("...i,...i->i", g64, x_hat)
    grad_beta = torch.einsum("...i->i", g64)
    return grad_x.to(x.dtype), grad_gamma.to(x.dtype), grad_beta.to(x.dtype)
