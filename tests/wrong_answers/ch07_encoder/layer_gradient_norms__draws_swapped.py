# The target drawn before x.
def layer_gradient_norms(norm_first, num_layers, seed=0):
    torch.manual_seed(seed)
    encoder = Encoder(num_layers, 16, 2, 32, norm_first=norm_first).double()
    generator = torch.Generator().manual_seed(seed)
    target = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    x = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    F.mse_loss(encoder(x), target).backward()
    return torch.stack([torch.cat([p.grad.flatten() for p in layer.parameters()]).norm() for layer in encoder.layers])
