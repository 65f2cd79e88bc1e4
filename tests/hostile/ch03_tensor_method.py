# exercise: ch03_bahdanau/sample_hard_attention
# attack: the Tensor method of the refused torch.multinomial
def sample_hard_attention(weights, generator):
    return weights.multinomial(1, generator=generator).squeeze(-1)
