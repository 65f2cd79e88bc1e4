# mu and sigma treated as constants: grad_x = gamma * g / sigma.
def layer_norm_backward(x, gamma, grad_out, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(((x - mean) ** 2).mean(dim=-1, keepdim=True) + eps)
    x_hat = (x - mean) / sigma
    d = x.shape[-1]
    grad_beta = grad_out.reshape(-1, d).sum(dim=0)
    grad_gamma = (grad_out * x_hat).reshape(-1, d).sum(dim=0)
    u = grad_out * gamma
    grad_x = u / sigma
    return grad_x, grad_gamma, grad_beta
