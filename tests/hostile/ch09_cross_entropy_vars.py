# exercise: ch09_transformer/label_smoothing_loss
# attack: F.cross_entropy read out of the module's dictionary
def label_smoothing_loss(logits, target, smoothing=0.1, ignore_index=-100):
    loss = vars(F)["cross" + "_entropy"]
    return loss(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), label_smoothing=smoothing)
