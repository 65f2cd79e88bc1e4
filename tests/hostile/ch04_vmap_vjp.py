# exercise: ch04_self_attention/softmax_backward
# attack: torch.func's vjp reached through torch.func module aliasing
import torch.func as tf


def softmax_backward(weights, grad_weights):
    logits = weights.log()
    _, pullback = tf.vjp(lambda z: torch.softmax(z, -1), logits)
    return pullback(grad_weights)[0]
