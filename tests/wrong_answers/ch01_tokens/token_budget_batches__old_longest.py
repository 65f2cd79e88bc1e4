# The size test made with the longest length of the batch so far, not with the new (longer) one.
def token_budget_batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    batches, current = [], []
    for index in sorted(range(len(lengths)), key=lambda i: (lengths[i], i)):
        if lengths[index] > max_tokens:
            raise ValueError(f"sequence {index} has length {lengths[index]}, longer than max_tokens={max_tokens}")
        if current and (len(current) + 1) * max(lengths[i] for i in current) > max_tokens:
            batches.append(current)
            current = []
        current.append(index)
    return batches + ([current] if current else [])


def padding_fraction(lengths: list[int], batches: list[list[int]]) -> float:
    """The share of the batches' padded positions (len(batch) x longest, summed) that hold padding."""
    real = sum(lengths[i] for batch in batches for i in batch)
    padded = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
    return 1.0 - real / padded
