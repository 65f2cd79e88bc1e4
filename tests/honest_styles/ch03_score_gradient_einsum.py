# exercise: ch03_bahdanau/attention_score_gradient
# style: torch.einsum, the Jacobian of the softmax written out
def attention_score_gradient(scores, values, grad_context):
    a = torch.softmax(scores, dim=-1)
    grad_a = torch.einsum("bd,bsd->bs", grad_context, values)
    return a * (grad_a - (a * grad_a).sum(dim=-1, keepdim=True))
