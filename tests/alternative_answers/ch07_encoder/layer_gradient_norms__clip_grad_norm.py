# Reads each layer's total gradient norm from nn.utils.clip_grad_norm_ with an infinite max_norm (nothing clipped)
# instead of concatenating the gradients.
def layer_gradient_norms(norm_first: bool, num_layers: int, seed: int = 0) -> torch.Tensor:
    """The L2 norm of the gradient of each layer's parameters at initialisation -> (num_layers,) float64."""
    torch.manual_seed(seed)
    encoder = Encoder(num_layers, 16, 2, 32, norm_first=norm_first).double()
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    target = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    nn.MSELoss()(encoder(x), target).backward()
    result = torch.zeros(num_layers, dtype=torch.float64)
    for l in range(num_layers):
        result[l] = nn.utils.clip_grad_norm_(encoder.layers[l].parameters(), max_norm=float("inf"))
    return result
