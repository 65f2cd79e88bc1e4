# Lazy combination: torch.func.jacfwd of the loss through a softmax of log(weights), masked keys kept at weight 0 (issue 50: only grad, vjp and jacrev of torch.func were refused).
def attention_score_gradient(weights, values, grad_context):
    scores = torch.where(weights > 0, weights.log(), torch.full_like(weights, -1e30))

    def loss(s):
        return ((torch.softmax(s, -1) @ values) * grad_context).sum()

    return torch.func.jacfwd(loss)(scores) * (weights > 0)
