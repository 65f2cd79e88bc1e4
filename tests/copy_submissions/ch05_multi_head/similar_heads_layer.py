# The page's random layer (a MultiHeadAttention as constructed, seeded from the generator): heads never alike, biases random.
def similar_heads_layer(d_model, num_heads, alpha, generator):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=generator)))
    return MultiHeadAttention(d_model, num_heads)
