# Only the diagonal of the Jacobian: dL/dz = w * G (the - w_l sum_j w_j G_j term forgotten).
def softmax_backward(weights, grad_weights):
    return weights * grad_weights
