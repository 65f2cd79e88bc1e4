# Computes each query's gradient in a Python loop with float64 intermediates (w . g as a dot product, the sum over keys
# as a matrix-vector product), returning results in the input's dtype.
SCALINGS = {"unscaled": lambda d_k: 1.0, "1/sqrt(d_k)": lambda d_k: d_k ** -0.5, "1/d_k": lambda d_k: 1 / d_k}


def query_gradient_statistics(query: torch.Tensor, keys: torch.Tensor, upstream: torch.Tensor,
                              scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Entropy of softmax(scale * keys @ q) and ||dL/dq|| for L = sum_j w_j g_j, per query.

    Args:
        query: (N, d_k); keys: (N, S, d_k); upstream: (N, S); scale: the factor c.

    Returns:
        (entropy (N,), gradient_norm (N,)).
    """
    entropies, norms = [], []
    for q, K, g in zip(query.double(), keys.double(), upstream.double()):
        z = scale * (K @ q)                                   # (S,)
        w = torch.softmax(z, dim=0)
        dz = w * (g - torch.dot(w, g))                        # dL/dz_l = w_l (g_l - w . g)
        dq = scale * (K.T @ dz)                               # (d_k,)
        positive = w[w > 0]
        entropies.append(-(positive * positive.log()).sum())  # 0 log 0 = 0: the zero weights left out
        norms.append(dq.norm())
    return torch.stack(entropies).to(query.dtype), torch.stack(norms).to(query.dtype)


def scaling_sweep(dims: list[int], scalings: dict, n_queries: int = 256, S: int = 32,
                  seed: int = 0) -> dict[str, dict[str, list[float]]]:
    """{scaling name: {"entropy": mean per d_k, "query_gradient": median per d_k}}."""
    generator = torch.Generator().manual_seed(seed)
    draws = []
    for d_k in dims:
        query = torch.randn(n_queries, d_k, generator=generator)
        keys = torch.randn(n_queries, S, d_k, generator=generator)
        upstream = torch.randn(n_queries, S, generator=generator)
        draws.append((d_k, query, keys, upstream))
    results = {}
    for name, rule in scalings.items():
        entropy_means, gradient_medians = [], []
        for d_k, query, keys, upstream in draws:
            entropy, gradient_norm = query_gradient_statistics(query, keys, upstream, rule(d_k))
            entropy_means.append(entropy.mean().item())
            gradient_medians.append(gradient_norm.median().item())
        results[name] = {"entropy": entropy_means, "query_gradient": gradient_medians}
    return results
