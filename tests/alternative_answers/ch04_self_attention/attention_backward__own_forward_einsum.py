# Recomputes the forward pass itself (scaled queries, torch.where for the mask and the empty rows) and writes every
# product of the chain rule with einsum.
def attention_backward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, grad_output: torch.Tensor,
                       mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dL/dQ, dL/dK, dL/dV) of O = softmax(Q K^T / sqrt(d_k)) V (masked), given dL/dO (..., T, d_v)."""
    c = query.shape[-1] ** -0.5
    scaled_query = c * query
    scores = torch.einsum("...td,...sd->...ts", scaled_query, key)                # Z = (c Q) K^T
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        weights = torch.softmax(torch.where(mask, scores, torch.full_like(scores, float("-inf"))), dim=-1)
        weights = torch.where(mask, weights, torch.zeros_like(weights))          # an empty row: 0, not NaN
    grad_value = torch.einsum("...ts,...tv->...sv", weights, grad_output)          # dV = W^T dO
    grad_weights = torch.einsum("...tv,...sv->...ts", grad_output, value)         # dW = dO V^T
    grad_scores = softmax_backward(weights, grad_weights)                         # dZ
    grad_query = c * torch.einsum("...ts,...sd->...td", grad_scores, key)         # dQ = c dZ K
    grad_key = torch.einsum("...ts,...td->...sd", grad_scores, scaled_query)      # dK = dZ^T (c Q)
    return grad_query, grad_key, grad_value
