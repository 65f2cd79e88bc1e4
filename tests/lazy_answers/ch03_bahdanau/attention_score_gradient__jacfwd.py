# torch.func.jacfwd of the softmax context (the text says no torch.func; only grad, vjp and jacrev are refused).
# earns 4, then 0 once issue 50 item 2 (no autograd: every torch.func transform refused) lands: the text says no torch.func
def attention_score_gradient(weights, values, grad_context):
    B, T, S = weights.shape

    def loss(scores, v, g):  # one query: scores (S,), values (S, d_v), g (d_v,)
        return ((torch.softmax(scores, dim=-1) @ v) * g).sum()

    scores = torch.where(weights > 0, weights.log(), torch.full_like(weights, float("-inf")))
    rows = torch.func.vmap(torch.func.jacfwd(loss))(
        scores.reshape(B * T, S), values[:, None].expand(B, T, *values.shape[1:]).reshape(B * T, *values.shape[1:]),
        grad_context.reshape(B * T, -1))
    return torch.where(weights > 0, rows.reshape(B, T, S).nan_to_num(), torch.zeros_like(weights))
