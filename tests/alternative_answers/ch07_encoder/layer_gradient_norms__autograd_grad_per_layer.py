# Uses torch.autograd.grad (once, for all the layers' parameters) instead of backward, the loss written out, and each
# layer's norm as the norm of its per-parameter norms.
def layer_gradient_norms(norm_first: bool, num_layers: int, seed: int = 0) -> torch.Tensor:
    """The L2 norm of the gradient of each layer's parameters at initialisation -> (num_layers,) float64."""
    torch.manual_seed(seed)
    encoder = Encoder(num_layers, 16, 2, 32, norm_first=norm_first)
    encoder = encoder.double()
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    target = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    loss = ((encoder(x) - target) ** 2).mean()
    groups = [list(layer.parameters()) for layer in encoder.layers]
    grads = torch.autograd.grad(loss, [p for group in groups for p in group])
    norms, start = [], 0
    for group in groups:
        mine = grads[start:start + len(group)]
        start += len(group)
        norms.append(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in mine])))
    return torch.stack(norms).to(torch.float64)
