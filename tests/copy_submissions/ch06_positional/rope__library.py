# transformer_lib.rope.RotaryEmbedding (the library's RoPE, chapter 11), called on x.
def rope(x, base=10000.0):
    from transformer_lib.rope import RotaryEmbedding
    return RotaryEmbedding(x.shape[-1], base)(x)
