# Copy of the chapter page's softmax_statistics and its sweep (section 4.4, autograd at the scores and queries), adapted to the exercise's signatures.
SCALINGS = {"unscaled": lambda d_k: 1.0, "1/sqrt(d_k)": lambda d_k: d_k ** -0.5, "1/d_k": lambda d_k: 1 / d_k}


def query_gradient_statistics(query, keys, upstream, scale):
    """Entropy, and gradient at the scores, for softmax(scores)."""
    dots = (keys @ query.unsqueeze(-1)).squeeze(-1)
    scores = (dots * scale).detach().requires_grad_(True)
    weights = torch.softmax(scores, dim=-1)
    (gradient,) = torch.autograd.grad((weights * upstream).sum(), scores)
    entropy = -(weights * weights.clamp_min(1e-45).log()).sum(dim=-1)
    return entropy.detach(), gradient.norm(dim=-1)


def scaling_sweep(dims, scalings, n_queries=256, S=32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    results = {name: {"entropy": [], "query_gradient": []} for name in scalings}
    for d in dims:
        q = torch.randn(n_queries, d, generator=generator)
        k = torch.randn(n_queries, S, d, generator=generator)
        upstream = torch.randn(n_queries, S, generator=generator)
        for name, rule in scalings.items():
            entropy, gradient = query_gradient_statistics(q, k, upstream, rule(d))
            results[name]["entropy"].append(entropy.mean().item())
            results[name]["query_gradient"].append(gradient.median().item())
    return results
