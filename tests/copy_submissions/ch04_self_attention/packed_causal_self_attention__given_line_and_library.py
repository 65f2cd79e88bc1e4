# Lazy combination: the given same_sequence line, the page's "pad & causal" (section 4.5) as same_sequence & causal_mask(N), and the library's scaled_dot_product_attention.
def packed_causal_self_attention(x, segment_ids):
    same_sequence = segment_ids[:, :, None] == segment_ids[:, None, :]
    allowed = same_sequence & transformer_lib.causal_mask(x.shape[1])
    return transformer_lib.scaled_dot_product_attention(x, x, x, allowed)
