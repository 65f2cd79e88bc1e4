# The library's loss (F.cross_entropy with label_smoothing, what transformer_lib.objectives calls)
# differentiated by autograd: a library call instead of the derivation.
def label_smoothing_grad(logits, target, smoothing=0.1, ignore_index=PAD_ID):
    leaf = logits.detach().clone().requires_grad_()
    loss = F.cross_entropy(leaf.reshape(-1, leaf.shape[-1]), target.reshape(-1), ignore_index=ignore_index,
                           label_smoothing=smoothing)
    return torch.autograd.grad(loss, leaf)[0]
