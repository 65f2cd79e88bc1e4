# Builds every alpha's layer first (x drawn before them), then loops over g outside and alpha inside with a list
# comprehension, instead of one loop over alpha that fills every g.
def pooling_sweep(alphas: list[float], kv_heads: list[int], d_model: int = 32, num_heads: int = 8, T: int = 12,
                  batch: int = 16, seed: int = 0, pool=mean_pool_kv_heads,
                  make_layer=similar_heads_layer, measure=relative_output_error) -> dict[int, list[float]]:
    """{g: [relative error of pool(layer, g) for each alpha]}."""
    generator = torch.Generator()
    generator.manual_seed(seed)
    x = torch.randn((batch, T, d_model), generator=generator)
    layers = [make_layer(d_model, num_heads, alpha, generator) for alpha in alphas]
    return {g: [measure(layer, pool(layer, g), x) for layer in layers] for g in kv_heads}
