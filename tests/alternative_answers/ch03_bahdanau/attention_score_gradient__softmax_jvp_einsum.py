# The softmax's vector-Jacobian form a * (u - sum_s a_s u_s) with u = g . v_s, by einsum; g . c never built from c.
def attention_score_gradient(weights: torch.Tensor, values: torch.Tensor, grad_context: torch.Tensor) -> torch.Tensor:
    """dL/d(scores) (B, T, S) of the context weights @ values, given weights (B, T, S), values (B, S, d_v), dL/dcontext (B, T, d_v)."""
    u = torch.einsum("btd,bsd->bts", grad_context, values)        # dL/da_s = g . v_s
    expected_u = torch.einsum("bts,bts->bt", weights, u)[..., None]   # sum_s a_s u_s (= g . c)
    return weights * (u - expected_u)
