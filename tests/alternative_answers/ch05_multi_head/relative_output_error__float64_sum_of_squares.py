# Detaches the outputs, works in float64 and takes the square root of the ratio of the sums of squares instead of
# Tensor.norm.
def relative_output_error(reference: nn.Module, approximation: nn.Module, x: torch.Tensor) -> float:
    """||approximation(x) - reference(x)|| / ||reference(x)||, both run as self-attention on x (B, T, d_model)."""
    y = reference(x, x, x)[0].detach().double()
    y_hat = approximation(x, x, x)[0].detach().double()
    return math.sqrt(((y_hat - y) ** 2).sum().item() / (y ** 2).sum().item())
