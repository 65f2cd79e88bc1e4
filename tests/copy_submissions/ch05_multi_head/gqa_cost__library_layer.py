# A lazy combination: transformer_lib.modern.GroupedQueryAttention built and its parameters counted, the page's multiply-add formulas (section 5.6) for the rest.
def gqa_cost(d_model, num_heads, num_kv_heads, T, S):
    from transformer_lib.modern import GroupedQueryAttention
    layer = GroupedQueryAttention(d_model, num_heads, num_kv_heads)
    return {"parameters": sum(p.numel() for p in layer.parameters()),
            "projection_macs": 2 * (T + S) * d_model**2,
            "attention_macs": 2 * T * S * d_model,
            "weight_entries": num_heads * T * S,
            "cache_entries": 2 * S * num_kv_heads * (d_model // num_heads)}
