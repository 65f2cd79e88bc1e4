# Copied from book/ch11_modern.md, section 11.1 (trained_parameters: build the model, sum numel),
# applied to one ModernBlock with the switches asked for.
def modern_block_params(d_model, num_heads, d_ff, num_kv_heads=None, norm="rms", feed_forward="swiglu", bias=False):
    config = ModernConfig(norm=norm, feed_forward=feed_forward, num_kv_heads=num_kv_heads, bias=bias)
    model = ModernBlock(d_model, num_heads, d_ff, config=config)
    return sum(p.numel() for p in model.parameters())
