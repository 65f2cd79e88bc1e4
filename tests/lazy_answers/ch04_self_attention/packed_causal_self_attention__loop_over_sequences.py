# Splits each row into its runs of equal ids and runs transformer_lib's causal attention on each run alone, filling a zero weight matrix block by block: no bug found (an alternative answer until issue 50).
# earns 0: the library's attention is refused while the answer runs, and outside the exercise's allow-list (its test cell withheld)
def packed_causal_self_attention(x: torch.Tensor, segment_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal self-attention within each of the sequences packed in a row.

    Args:
        x: (B, N, d), several sequences back to back in each row.
        segment_ids: (B, N), the sequence each token belongs to.

    Returns:
        (output (B, N, d), weights (B, N, N)): token n attends to the tokens m <= n of its own sequence.
    """
    B, N, d = x.shape
    output = torch.zeros_like(x)
    weights = x.new_zeros(B, N, N)
    for b in range(B):
        ids = segment_ids[b].tolist()
        start = 0
        for n in range(1, N + 1):
            if n == N or ids[n] != ids[n - 1]:              # the run start .. n - 1 ends here
                piece = x[b, start:n]
                out, w = transformer_lib.scaled_dot_product_attention(piece, piece, piece,
                                                                      transformer_lib.causal_mask(n - start))
                output[b, start:n] = out
                weights[b, start:n, start:n] = w
                start = n
    return output, weights
