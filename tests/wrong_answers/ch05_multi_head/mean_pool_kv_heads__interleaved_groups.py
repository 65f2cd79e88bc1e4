# Groups of strided heads (heads i, i + g, i + 2g, ... pooled together) instead of consecutive ones (group j = heads j r .. j r + r - 1).
def mean_pool_kv_heads(mha, num_kv_heads):
    num_heads, d_model, d_k = mha.num_heads, mha.d_model, mha.d_k
    if num_heads % num_kv_heads:
        raise ValueError(f"num_kv_heads={num_kv_heads} must divide num_heads={num_heads}")
    group_size = num_heads // num_kv_heads
    pooled = copy.deepcopy(mha)
    with torch.no_grad():
        for part in (1, 2):
            rows = slice(part * d_model, (part + 1) * d_model)
            weight = pooled.in_proj.weight[rows].view(group_size, num_kv_heads, d_k, d_model)
            weight.copy_(weight.mean(dim=0, keepdim=True).expand_as(weight))
            bias = pooled.in_proj.bias[rows].view(group_size, num_kv_heads, d_k)
            bias.copy_(bias.mean(dim=0, keepdim=True).expand_as(bias))
    return pooled
