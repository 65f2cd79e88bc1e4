# exercise: ch11_modern/to_interleaved
# style: reshape, stack and flatten
def to_interleaved(weight, num_heads):
    out_features, d_in = weight.shape
    d_head = out_features // num_heads
    halves = weight.view(num_heads, 2, d_head // 2, d_in)
    return torch.stack((halves[:, 0], halves[:, 1]), dim=2).reshape(out_features, d_in)
