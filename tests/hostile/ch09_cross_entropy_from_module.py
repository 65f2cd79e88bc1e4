# exercise: ch09_transformer/label_smoothing_loss
# attack: F.cross_entropy imported under another name
from torch.nn.functional import cross_entropy as smooth


def label_smoothing_loss(logits, target, smoothing=0.1, ignore_index=-100):
    return smooth(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), label_smoothing=smoothing)
