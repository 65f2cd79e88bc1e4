# Only the weights pooled; the key and value biases left per head.
def mean_pool_kv_heads(mha, num_kv_heads):
    if mha.num_heads % num_kv_heads:
        raise ValueError(f"num_kv_heads={num_kv_heads} must divide num_heads={mha.num_heads}")
    d_model, d_k = mha.d_model, mha.d_k
    pooled = copy.deepcopy(mha)
    with torch.no_grad():
        for part in (1, 2):
            weight = pooled.in_proj.weight[part * d_model:(part + 1) * d_model].view(num_kv_heads, -1, d_k, d_model)
            weight.copy_(weight.mean(dim=1, keepdim=True).expand_as(weight))
    return pooled
