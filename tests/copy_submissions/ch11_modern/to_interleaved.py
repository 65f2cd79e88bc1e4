# As transformer_lib/weights.py (llama_layer_state) loads a Llama checkpoint's query and key
# projections: unchanged.
def to_interleaved(weight, num_heads):
    if weight.shape[1] % num_heads or (weight.shape[1] // num_heads) % 2:
        raise ValueError(f"need heads of an even size, got {weight.shape[1]} columns and num_heads={num_heads}")
    return weight.clone()
