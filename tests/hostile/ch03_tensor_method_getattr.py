# exercise: ch03_bahdanau/sample_hard_attention
# attack: the Tensor method through getattr with a constant
def sample_hard_attention(weights, generator):
    return getattr(weights, "multinomial")(1, generator=generator).squeeze(-1)
