# W_Q pooled as well as W_K and W_V (only the key and value heads are shared).
def mean_pool_kv_heads(mha, num_kv_heads):
    num_heads, d_model, d_k = mha.num_heads, mha.d_model, mha.d_k
    if num_heads % num_kv_heads:
        raise ValueError(f"num_kv_heads={num_kv_heads} must divide num_heads={num_heads}")
    pooled = copy.deepcopy(mha)
    with torch.no_grad():
        for part in (0, 1, 2):
            rows = slice(part * d_model, (part + 1) * d_model)
            weight = pooled.in_proj.weight[rows].view(num_kv_heads, -1, d_k, d_model)
            weight.copy_(weight.mean(dim=1, keepdim=True).expand_as(weight))
            bias = pooled.in_proj.bias[rows].view(num_kv_heads, -1, d_k)
            bias.copy_(bias.mean(dim=1, keepdim=True).expand_as(bias))
    return pooled
