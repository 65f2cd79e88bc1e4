# exercise: ch04_self_attention/attention_backward
# style: helper functions in a cell of their own, reached by the answer
def _softmax_grad(a, grad_a):
    return a * (grad_a - (a * grad_a).sum(-1, keepdim=True))
# %%
import math


def attention_backward(q, k, v, grad_out):
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    a = torch.softmax(scores, dim=-1)
    grad_v = a.transpose(-2, -1) @ grad_out
    grad_scores = _softmax_grad(a, grad_out @ v.transpose(-2, -1)) / math.sqrt(d)
    return grad_scores @ k, grad_scores.transpose(-2, -1) @ q, grad_v
