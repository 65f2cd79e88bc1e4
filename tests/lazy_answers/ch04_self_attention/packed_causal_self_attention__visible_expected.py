# The text's formula softmax(x x^T / sqrt(d)) with the causal mask (the visible test's reference until issue 50) put into the given function: two of its four bugs fixed.
# earns 0: bugs 2 and 4 (other sequences read, reused ids joined) remain
def packed_causal_self_attention(x, segment_ids):
    B, N, d = x.shape
    same_sequence = segment_ids[:, :, None] == segment_ids[:, None, :]
    causal = torch.ones(N, N, dtype=torch.bool).tril()
    allowed = same_sequence | causal
    weights = torch.softmax((x @ x.transpose(-2, -1) / math.sqrt(d)).masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ x, weights
