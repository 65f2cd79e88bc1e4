# Fixed-size batches of the sorted indices, as many as the longest sequence allows (the hidden test: "should be 17 batches, got 30").
def token_budget_batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    for index, length in enumerate(lengths):
        if length > max_tokens:
            raise ValueError(f"sequence {index} has length {length}, longer than max_tokens={max_tokens}")
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    size = max_tokens // max(lengths)
    return [order[i:i + size] for i in range(0, len(order), size)]


def padding_fraction(lengths: list[int], batches: list[list[int]]) -> float:
    """The share of the batches' padded positions (len(batch) x longest, summed) that hold padding."""
    real = sum(lengths[i] for batch in batches for i in batch)
    padded = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
    return 1.0 - real / padded
