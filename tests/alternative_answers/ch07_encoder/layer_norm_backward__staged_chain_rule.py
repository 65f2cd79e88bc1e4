# Back-propagates through the forward graph stage by stage (x_hat <- sigma <- variance <- mean, the classic staged
# backward) instead of the closed-form formula.
def layer_norm_backward(x: torch.Tensor, gamma: torch.Tensor, grad_out: torch.Tensor,
                        eps: float = 1e-5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x, grad_out (..., d), gamma (d,) -> grad_x (..., d), grad_gamma (d,), grad_beta (d,)."""
    d = x.shape[-1]
    # forward, keeping every intermediate
    mu = x.sum(dim=-1, keepdim=True) / d
    xc = x - mu
    var = (xc * xc).sum(dim=-1, keepdim=True) / d
    std = (var + eps) ** 0.5
    inv_std = 1.0 / std
    x_hat = xc * inv_std
    # parameters: sum over every vector of the batch
    flat_g = grad_out.reshape(-1, d)
    grad_beta = flat_g.sum(dim=0)
    grad_gamma = (flat_g * x_hat.reshape(-1, d)).sum(dim=0)
    # backward, one stage at a time
    d_xhat = grad_out * gamma
    d_inv_std = (d_xhat * xc).sum(dim=-1, keepdim=True)
    d_var = d_inv_std * (-0.5) * (var + eps) ** -1.5
    d_xc = d_xhat * inv_std + d_var * 2.0 * xc / d
    d_mu = -d_xc.sum(dim=-1, keepdim=True)
    grad_x = d_xc + d_mu / d
    return grad_x, grad_gamma, grad_beta
