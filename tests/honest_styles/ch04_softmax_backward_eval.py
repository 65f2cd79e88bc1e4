# exercise: ch04_self_attention/softmax_backward
# style: by hand, with a model put in eval mode in a cell of its own and checked with autograd there
def softmax_backward(weights, grad_weights):
    inner = (weights * grad_weights).sum(dim=-1, keepdim=True)
    return weights * (grad_weights - inner)
# %%
model = nn.Linear(4, 4)
model.eval()
scores = torch.randn(2, 4, requires_grad=True)
w = torch.softmax(model(scores), dim=-1)
g = torch.randn_like(w)
expected, = torch.autograd.grad(w, scores, g, retain_graph=True)
print(expected.shape, softmax_backward(w.detach(), g).shape)
