# The row sum taken without keepdim: it broadcasts against the wrong axis for batched rows.
def softmax_backward(weights, grad_weights):
    return weights * (grad_weights - (weights * grad_weights).sum(dim=-1))
