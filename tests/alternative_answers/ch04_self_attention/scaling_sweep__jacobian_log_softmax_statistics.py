# Applies the softmax Jacobian diag(w) - w w^T as a batched matrix, gets the entropy from log_softmax, draws upstream,
# keys, queries in that order and takes mean and median with Python's statistics module (the median of an even count is
# the midpoint).
import statistics

SCALINGS = {"unscaled": lambda d_k: 1.0, "1/sqrt(d_k)": lambda d_k: d_k ** -0.5, "1/d_k": lambda d_k: 1 / d_k}


def query_gradient_statistics(query: torch.Tensor, keys: torch.Tensor, upstream: torch.Tensor,
                              scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Entropy of softmax(scale * keys @ q) and ||dL/dq|| for L = sum_j w_j g_j, per query.

    Args:
        query: (N, d_k); keys: (N, S, d_k); upstream: (N, S); scale: the factor c.

    Returns:
        (entropy (N,), gradient_norm (N,)).
    """
    scores = scale * torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)           # (N, S)
    log_weights = torch.log_softmax(scores, dim=-1)
    weights = log_weights.exp()
    jacobian = torch.diag_embed(weights) - weights.unsqueeze(-1) * weights.unsqueeze(-2)  # (N, S, S), symmetric
    grad_scores = torch.bmm(jacobian, upstream.unsqueeze(-1))                   # (N, S, 1): dL/dz
    grad_query = scale * torch.bmm(keys.transpose(1, 2), grad_scores).squeeze(-1)  # (N, d_k): c K^T dL/dz
    entropy = -(weights * log_weights).sum(dim=-1)                               # a zero weight times a finite log
    return entropy, torch.linalg.vector_norm(grad_query, dim=-1)


def scaling_sweep(dims: list[int], scalings: dict, n_queries: int = 256, S: int = 32,
                  seed: int = 0) -> dict[str, dict[str, list[float]]]:
    """{scaling name: {"entropy": mean per d_k, "query_gradient": median per d_k}}."""
    generator = torch.Generator()
    generator.manual_seed(seed)
    results = {}
    for name in scalings:
        results[name] = {"entropy": [], "query_gradient": []}
    for d_k in dims:
        upstream = torch.randn(n_queries, S, generator=generator)
        keys = torch.randn(n_queries, S, d_k, generator=generator)
        query = torch.randn(n_queries, d_k, generator=generator)
        for name in scalings:
            entropy, gradient_norm = query_gradient_statistics(query, keys, upstream, scalings[name](d_k))
            results[name]["entropy"].append(float(statistics.fmean(entropy.tolist())))
            results[name]["query_gradient"].append(float(statistics.median(gradient_norm.tolist())))
    return results
