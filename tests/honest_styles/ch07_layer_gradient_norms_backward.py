# exercise: ch07_encoder/layer_gradient_norms
# style: an exercise without rules that uses autograd as asked (loss.backward, named_parameters)
def layer_gradient_norms(model, tokens, labels):
    model.zero_grad()
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    return {name: p.grad.norm().item() for name, p in model.named_parameters() if p.grad is not None}
