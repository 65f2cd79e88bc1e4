# exercise: ch12_adapt/sft_loss
# style: F.cross_entropy where no rule refuses it, ignore_index
def sft_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
