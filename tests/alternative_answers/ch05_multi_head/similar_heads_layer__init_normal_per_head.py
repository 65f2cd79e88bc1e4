# Draws with nn.init.normal_(..., generator=) into each parameter and builds W_K and W_V head by head in a Python loop
# (torch.cat of C + alpha N_i), instead of one scaled randn per tensor.
def similar_heads_layer(d_model: int, num_heads: int, alpha: float, generator: torch.Generator) -> MultiHeadAttention:
    """A MultiHeadAttention whose heads' key and value rows are C + alpha * N_i (no biases)."""
    layer = MultiHeadAttention(d_model, num_heads)
    d_k, std = d_model // num_heads, d_model ** -0.5
    with torch.no_grad():
        layer.in_proj.bias.zero_()
        layer.out_proj.bias.zero_()
        nn.init.normal_(layer.out_proj.weight, 0.0, std, generator=generator)
        nn.init.normal_(layer.in_proj.weight[:d_model], 0.0, std, generator=generator)  # W_Q
        for part in (1, 2):  # W_K, W_V
            shared = nn.init.normal_(torch.empty(d_k, d_model), 0.0, std, generator=generator)
            heads = []
            for _ in range(num_heads):
                own = nn.init.normal_(torch.empty(d_k, d_model), 0.0, std, generator=generator)
                heads.append(shared + alpha * own)
            layer.in_proj.weight[part * d_model:(part + 1) * d_model] = torch.cat(heads)
    return layer
