# Sorts (length, index) pairs and opens a batch when the next one would not fit; padding_fraction in float64 tensors.
def token_budget_batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Indices sorted by length, cut greedily into batches whose padded size len(batch) x T is at most max_tokens."""
    batches = []
    for length, index in sorted((length, index) for index, length in enumerate(lengths)):
        if length > max_tokens:
            raise ValueError(f"sequence {index} (length {length}) does not fit in max_tokens={max_tokens}")
        if not batches or (len(batches[-1]) + 1) * length > max_tokens:
            batches.append([])
        batches[-1].append(index)
    return batches


def padding_fraction(lengths: list[int], batches: list[list[int]]) -> float:
    """The share of the batches' padded positions (len(batch) x longest, summed) that hold padding."""
    all_lengths = torch.tensor(lengths, dtype=torch.float64)
    real = torch.stack([all_lengths[batch].sum() for batch in batches]).sum()
    padded = torch.stack([all_lengths[batch].max() * len(batch) for batch in batches]).sum()
    return float(1 - real / padded)
