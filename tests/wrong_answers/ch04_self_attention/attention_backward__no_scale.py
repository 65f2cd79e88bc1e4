# dQ and dK without the 1/sqrt(d_k) of the scores.
def attention_backward(query, key, value, grad_output, mask=None):
    _, weights = transformer_lib.scaled_dot_product_attention(query, key, value, mask)
    grad_scores = softmax_backward(weights, grad_output @ value.transpose(-2, -1))
    return grad_scores @ key, grad_scores.transpose(-2, -1) @ query, weights.transpose(-2, -1) @ grad_output
