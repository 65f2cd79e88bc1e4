# The protocol of the task text with the functions called by name (the given builder and the page's max |diff| inline), make_layer ignored.
def pooling_sweep(alphas, kv_heads, d_model=32, num_heads=8, T=12, batch=16, seed=0, pool=mean_pool_kv_heads,
                  make_layer=None):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, T, d_model, generator=generator)
    errors = {g: [] for g in kv_heads}
    for alpha in alphas:
        layer = MultiHeadAttention(d_model, num_heads)
        for g in kv_heads:
            with torch.no_grad():
                errors[g].append((pool(layer, g)(x, x, x)[0] - layer(x, x, x)[0]).abs().max().item())
    return errors
