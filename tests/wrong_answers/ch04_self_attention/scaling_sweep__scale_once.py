# The scale applied to the weights but not through dz/dq = c k (the query gradient misses one factor c).
SCALINGS = {"unscaled": lambda d_k: 1.0, "1/sqrt(d_k)": lambda d_k: d_k ** -0.5, "1/d_k": lambda d_k: 1 / d_k}


def query_gradient_statistics(query, keys, upstream, scale):
    weights = torch.softmax(scale * torch.einsum("nsd,nd->ns", keys, query), dim=-1)
    grad_scores = weights * (upstream - (weights * upstream).sum(-1, keepdim=True))
    gradient = torch.einsum("ns,nsd->nd", grad_scores, keys)
    return -(weights * weights.clamp_min(1e-45).log()).sum(-1), gradient.norm(dim=-1)


def scaling_sweep(dims, scalings, n_queries=256, S=32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    results = {name: {"entropy": [], "query_gradient": []} for name in scalings}
    for d_k in dims:
        query, keys = torch.randn(n_queries, d_k, generator=generator), torch.randn(n_queries, S, d_k, generator=generator)
        upstream = torch.randn(n_queries, S, generator=generator)
        for name, rule in scalings.items():
            entropy, norm = query_gradient_statistics(query, keys, upstream, rule(d_k))
            results[name]["entropy"].append(entropy.mean().item())
            results[name]["query_gradient"].append(norm.median().item())
    return results
