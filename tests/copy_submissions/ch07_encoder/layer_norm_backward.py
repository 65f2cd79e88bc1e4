# copy: no public code differentiates LayerNorm by hand; the closest is the layer norm of transformer_lib.layers.Residual (nn.LayerNorm) differentiated by autograd
def layer_norm_backward(x: torch.Tensor, gamma: torch.Tensor, grad_out: torch.Tensor,
                        eps: float = 1e-5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x, grad_out (..., d), gamma (d,) -> grad_x (..., d), grad_gamma (d,), grad_beta (d,)."""
    x = x.detach().clone().requires_grad_()
    gamma = gamma.detach().clone().requires_grad_()
    beta = torch.zeros_like(gamma, requires_grad=True)
    y = F.layer_norm(x, x.shape[-1:], gamma, beta, eps)
    return torch.autograd.grad(y, (x, gamma, beta), grad_out)
