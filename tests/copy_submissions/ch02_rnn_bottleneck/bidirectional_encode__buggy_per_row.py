# The notebook's own buggy_bidirectional_encode run on each row's real tokens alone (no padding, so
# none of its bugs shows), then padded with zeros: a loop over rows instead of the reversal index.
def bidirectional_encode(xs, lengths, forward_rnn, backward_rnn):
    B, T, _ = xs.shape
    rows, contexts = [], []
    for b in range(B):
        n = int(lengths[b])
        states, context = buggy_bidirectional_encode(xs[b:b + 1, :n], lengths[b:b + 1], forward_rnn, backward_rnn)
        rows.append(torch.cat([states[0], states.new_zeros(T - n, states.shape[-1])]))
        contexts.append(context[0])
    return torch.stack(rows), torch.stack(contexts)
