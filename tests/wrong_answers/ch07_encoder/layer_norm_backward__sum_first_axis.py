# grad_gamma and grad_beta summed over the first axis only (wrong for 3-D inputs).
def layer_norm_backward(x, gamma, grad_out, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(((x - mean) ** 2).mean(dim=-1, keepdim=True) + eps)
    x_hat = (x - mean) / sigma
    d = x.shape[-1]
    grad_beta = grad_out.sum(dim=0)
    grad_gamma = (grad_out * x_hat).sum(dim=0)
    u = grad_out * gamma
    grad_x = (u - u.mean(dim=-1, keepdim=True) - x_hat * (u * x_hat).mean(dim=-1, keepdim=True)) / sigma
    return grad_x, grad_gamma, grad_beta
