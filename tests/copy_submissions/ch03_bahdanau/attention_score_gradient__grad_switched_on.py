# Lazy combination: gradients switched back on inside the answer and the softmax's graph walked by hand through grad_fn (no torch.autograd call, no backward).
def attention_score_gradient(weights, values, grad_context):
    was_on = torch.is_grad_enabled()
    torch._C._set_grad_enabled(True)
    try:
        scores = torch.where(weights > 0, weights.log(), torch.full_like(weights, -1e30)).requires_grad_(True)
        context = torch.softmax(scores, -1)
        node = context.grad_fn  # softmax's backward node
        return node(grad_context @ values.transpose(-2, -1)) * (weights > 0)
    finally:
        torch._C._set_grad_enabled(was_on)
