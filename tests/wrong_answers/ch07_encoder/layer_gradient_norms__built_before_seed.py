# The encoder built before torch.manual_seed (its weights depend on the random state outside).
def layer_gradient_norms(norm_first, num_layers, seed=0):
    encoder = Encoder(num_layers, 16, 2, 32, norm_first=norm_first).double()
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    target = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    F.mse_loss(encoder(x), target).backward()
    return torch.stack([torch.cat([p.grad.flatten() for p in layer.parameters()]).norm() for layer in encoder.layers])
