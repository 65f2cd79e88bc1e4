# exercise: ch04_self_attention/softmax_backward
# attack: PyTorch's own private softmax backward
def softmax_backward(weights, grad_weights):
    return torch._softmax_backward_data(grad_weights, weights, -1, weights.dtype)
