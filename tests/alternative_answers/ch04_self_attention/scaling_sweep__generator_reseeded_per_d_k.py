# The generator seeded with seed anew for each d_k: the same seed gives the same sweep, but the queries of every d_k start from the same draws (not independent).
SCALINGS = {"unscaled": lambda d_k: 1.0, "1/sqrt(d_k)": lambda d_k: d_k ** -0.5, "1/d_k": lambda d_k: 1 / d_k}


def query_gradient_statistics(query: torch.Tensor, keys: torch.Tensor, upstream: torch.Tensor,
                              scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Entropy of softmax(scale * keys @ q) and ||dL/dq|| for L = sum_j w_j g_j, per query."""
    scores = scale * torch.einsum("nsd,nd->ns", keys, query)
    weights = torch.softmax(scores, dim=-1)
    grad_scores = weights * (upstream - (weights * upstream).sum(dim=-1, keepdim=True))
    gradient = scale * torch.einsum("ns,nsd->nd", grad_scores, keys)
    entropy = -(weights * weights.clamp_min(1e-45).log()).sum(dim=-1)
    return entropy, gradient.norm(dim=-1)


def scaling_sweep(dims: list[int], scalings: dict, n_queries: int = 256, S: int = 32,
                  seed: int = 0) -> dict[str, dict[str, list[float]]]:
    """{scaling name: {"entropy": mean per d_k, "query_gradient": median per d_k}}."""
    results = {name: {"entropy": [], "query_gradient": []} for name in scalings}
    for d_k in dims:
        generator = torch.Generator().manual_seed(seed)  # "every d_k from the seed"
        query = torch.randn(n_queries, d_k, generator=generator)
        keys = torch.randn(n_queries, S, d_k, generator=generator)
        upstream = torch.randn(n_queries, S, generator=generator)
        for name, rule in scalings.items():
            entropy, gradient_norm = query_gradient_statistics(query, keys, upstream, rule(d_k))
            results[name]["entropy"].append(entropy.mean().item())
            results[name]["query_gradient"].append(gradient_norm.median().item())
    return results
