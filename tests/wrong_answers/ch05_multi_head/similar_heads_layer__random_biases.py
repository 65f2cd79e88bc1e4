# The biases left as MultiHeadAttention initialises them (the task asks for zeros).
def similar_heads_layer(d_model, num_heads, alpha, generator):
    layer = MultiHeadAttention(d_model, num_heads)
    d_k = d_model // num_heads
    draw = lambda *shape: torch.randn(shape, generator=generator) / math.sqrt(d_model)
    with torch.no_grad():
        for parameter in layer.parameters():
            if parameter.dim() == 2:
                parameter.copy_(draw(*parameter.shape))
        for part in (1, 2):
            shared, own = draw(1, d_k, d_model), draw(num_heads, d_k, d_model)
            layer.in_proj.weight[part * d_model:(part + 1) * d_model] = (shared + alpha * own).reshape(d_model, d_model)
    return layer
