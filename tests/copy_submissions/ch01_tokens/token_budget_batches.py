# Copied from transformer_lib/data.py, BucketBatchSampler._all_batches (sort by length, cut into batches), with the batch size that the budget allows for the longest sequence; padding_fraction from section 1.3 of the page ((~mask).sum() of mask.numel()).
def token_budget_batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Indices sorted by length, cut greedily into batches whose padded size len(batch) x T is at most max_tokens."""
    if max(lengths) > max_tokens:
        raise ValueError(f"a sequence of length {max(lengths)} does not fit in max_tokens={max_tokens}")
    batch_size = max_tokens // max(lengths)
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def padding_fraction(lengths: list[int], batches: list[list[int]]) -> float:
    """The share of the batches' padded positions (len(batch) x longest, summed) that hold padding."""
    padding = positions = 0
    for batch in batches:
        mask = lengths_to_mask(torch.tensor([lengths[i] for i in batch]))
        padding += (~mask).sum().item()
        positions += mask.numel()
    return padding / positions
