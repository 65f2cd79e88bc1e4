# Counts the four projections in a loop over (rows, in, out) and the attention per query head with divmod checks in the
# other order, instead of one closed-form expression per entry.
def gqa_cost(d_model: int, num_heads: int, num_kv_heads: int, T: int, S: int) -> dict[str, int]:
    """Parameters, multiply-adds, attention weights and KV-cache size of grouped-query attention."""
    group_size, left_over = divmod(num_heads, num_kv_heads)
    d_k, rest = divmod(d_model, num_heads)
    if left_over != 0 or rest != 0:
        raise ValueError(f"num_kv_heads={num_kv_heads} must divide num_heads={num_heads} and num_heads must divide "
                         f"d_model={d_model}")
    kv_width = d_model // group_size  # g * d_k
    projections = [(T, d_model, d_model),   # W_Q on the T queries
                   (S, d_model, kv_width),  # W_K on the S keys
                   (S, d_model, kv_width),  # W_V
                   (T, d_model, d_model)]   # W_O on the merged heads
    parameters = projection_macs = 0
    for rows, fan_in, fan_out in projections:
        parameters += fan_in * fan_out + fan_out
        projection_macs += rows * fan_in * fan_out
    attention_macs = 0
    for _ in range(num_heads):  # every query head: (T, d_k) @ (d_k, S), then (T, S) @ (S, d_k)
        attention_macs += T * d_k * S + T * S * d_k
    return {"parameters": parameters, "projection_macs": projection_macs, "attention_macs": attention_macs,
            "weight_entries": num_heads * T * S, "cache_entries": 2 * num_kv_heads * S * d_k}
