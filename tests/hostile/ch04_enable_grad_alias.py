# exercise: ch04_self_attention/attention_backward
# attack: set_grad_enabled where enable_grad is refused, then autograd.grad under an alias
from torch import autograd as ag


def attention_backward(q, k, v, grad_out):
    with torch.set_grad_enabled(True):
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
        out = torch.softmax(q @ k.transpose(-2, -1), -1) @ v
        return ag.grad(out, (q, k, v), grad_out)
