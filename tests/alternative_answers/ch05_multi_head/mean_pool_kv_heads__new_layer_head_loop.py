# Builds a new MultiHeadAttention, loads a copy of the state dict into it, and averages the heads of each group in a
# Python loop over groups (torch.stack of the heads' rows) instead of a deepcopy and a view.
def mean_pool_kv_heads(mha: MultiHeadAttention, num_kv_heads: int) -> MultiHeadAttention:
    """A copy of mha whose key and value heads are averaged within each group of h / g heads."""
    h = mha.num_heads
    if num_kv_heads < 1 or h % num_kv_heads != 0:
        raise ValueError(f"cannot pool {h} heads into {num_kv_heads} groups: num_kv_heads must divide num_heads")
    d, d_k, r = mha.d_model, mha.d_k, h // num_kv_heads
    state = {name: tensor.detach().clone() for name, tensor in mha.state_dict().items()}
    weight, bias = state["in_proj.weight"], state["in_proj.bias"]
    for offset in (d, 2 * d):  # the first row of W_K, then of W_V
        for group in range(num_kv_heads):
            heads = [offset + (group * r + m) * d_k for m in range(r)]  # the first row of each head of the group
            mean_w = torch.stack([weight[start:start + d_k] for start in heads]).mean(dim=0)
            mean_b = torch.stack([bias[start:start + d_k] for start in heads]).mean(dim=0)
            for start in heads:
                weight[start:start + d_k] = mean_w
                bias[start:start + d_k] = mean_b
    pooled = MultiHeadAttention(d, h, dropout=mha.dropout).to(dtype=mha.in_proj.weight.dtype)
    pooled.load_state_dict(state)
    pooled.train(mha.training)
    return pooled
