# Copied from transformer_lib/attention.py (scaled_dot_product_attention, explicit path, with
# masked_softmax inlined), printed on book/ch10_beyond.md, with the causal mask of the whole row.
def packed_attention(q, k, v, cu_seqlens):
    query, key, value = q, k, v
    T, S = query.size(-2), key.size(-2)
    mask = torch.ones(S, S, dtype=torch.bool).tril()[:T]  # causal_mask, top-left aligned
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))  # (..., T, S)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    weights = weights.masked_fill(~mask, 0.0)
    output = weights @ value
    return output, weights
