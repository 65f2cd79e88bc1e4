# Copied from transformer_lib/tiled.py (tiled_attention's online-softmax update, printed on
# book/ch11_modern.md, section 11.8): the first worker as the running state, the second as the new tile.
def merge_attention(out_a, lse_a, out_b, lse_b):
    running_max, running_sum, acc = lse_a[..., None], torch.ones_like(lse_a[..., None]), out_a
    new_max = torch.maximum(running_max, lse_b[..., None])
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(lse_b[..., None] - new_max)
    running_sum = running_sum * rescale + p
    acc = acc * rescale + p * out_b
    return acc / running_sum, new_max[..., 0]
