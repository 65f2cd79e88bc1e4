# Pools the argument in place and returns it (the caller's layer is changed).
def mean_pool_kv_heads(mha, num_kv_heads):
    if mha.num_heads % num_kv_heads:
        raise ValueError(f"num_kv_heads={num_kv_heads} must divide num_heads={mha.num_heads}")
    d_model, d_k = mha.d_model, mha.d_k
    with torch.no_grad():
        for part in (1, 2):
            rows = slice(part * d_model, (part + 1) * d_model)
            weight = mha.in_proj.weight[rows].view(num_kv_heads, -1, d_k, d_model)
            weight.copy_(weight.mean(dim=1, keepdim=True).expand_as(weight))
            bias = mha.in_proj.bias[rows].view(num_kv_heads, -1, d_k)
            bias.copy_(bias.mean(dim=1, keepdim=True).expand_as(bias))
    return mha
