# Each draw's term (L_i - b_i)(onehot(s_i) - a) as an (N, n, S) tensor, averaged; empty rows zeroed by a factor.
def reinforce_score_gradient(weights: torch.Tensor, values: torch.Tensor, grad_context: torch.Tensor, n_samples: int,
                             generator: torch.Generator, baseline: bool = False) -> torch.Tensor:
    """Score-function estimate (B, T, S) of dL/d(scores) for L = g . v_s, s drawn n_samples times from each row of weights."""
    S = weights.shape[-1]
    rows = weights.detach().reshape(-1, S)                                          # (N, S)
    empty = rows.sum(dim=-1) == 0                                                   # queries with no key
    rows_to_draw = rows.clone()
    rows_to_draw[empty] = 1.0                                                       # multinomial refuses a row of zeros
    draws = torch.multinomial(rows_to_draw, n_samples, replacement=True, generator=generator)  # (N, n)
    L = torch.einsum("btd,bsd->bts", grad_context, values).detach().reshape(-1, S)  # L(s) = g . v_s, (N, S)
    L_drawn = torch.take_along_dim(L, draws, dim=1)                                 # (N, n)
    if baseline:
        others = (L_drawn.sum(dim=1, keepdim=True) - L_drawn) / (n_samples - 1)    # mean of the OTHER draws
        L_drawn = L_drawn - others
    one_hot = F.one_hot(draws, S).to(rows.dtype)                                    # (N, n, S): 1[s_i = j]
    terms = L_drawn[..., None] * (one_hot - rows[:, None, :])
    estimate = terms.mean(dim=1) * (~empty).to(rows.dtype)[:, None]
    return estimate.reshape(weights.shape)
