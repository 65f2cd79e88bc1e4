# exercise: ch04_self_attention/softmax_backward
# style: a self-check in the answer cell under `if __name__ == "__main__":`, using autograd there
def softmax_backward(weights, grad_weights):
    return weights * grad_weights - weights * torch.sum(weights * grad_weights, -1, keepdim=True)


if __name__ == "__main__":
    x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    y = torch.softmax(x, -1)
    upstream = torch.randn_like(y)
    y.backward(upstream)
    assert torch.allclose(x.grad, softmax_backward(y.detach(), upstream))
