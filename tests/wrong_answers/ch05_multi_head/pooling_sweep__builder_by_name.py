# The layer built by calling similar_heads_layer by name (make_layer ignored).
def pooling_sweep(alphas, kv_heads, d_model=32, num_heads=8, T=12, batch=16, seed=0, pool=mean_pool_kv_heads,
                  make_layer=similar_heads_layer, measure=relative_output_error):
    draws = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, T, d_model, generator=draws)
    errors = {g: [] for g in kv_heads}
    for alpha in alphas:
        layer = similar_heads_layer(d_model, num_heads, alpha, draws)
        for g in kv_heads:
            errors[g].append(measure(layer, pool(layer, g), x))
    return errors
