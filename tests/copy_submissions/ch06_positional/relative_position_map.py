# copy: the chapter page's least-squares fit of M_k to the sinusoidal table (torch.linalg.lstsq on sinusoidal_positional_encoding)
def relative_position_map(k: int, d_model: int) -> torch.Tensor:
    """M (d_model, d_model), float64, with PE[pos + k] = PE[pos] @ M.T for every position."""
    from transformer_lib.positional import sinusoidal_positional_encoding
    table = sinusoidal_positional_encoding(4000, d_model).double()
    return torch.linalg.lstsq(table[:-k], table[k:]).solution.T
