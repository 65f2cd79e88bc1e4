# Validates all lengths first, stable sort on length alone, a running batch max; padding counted per batch.
def token_budget_batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Indices sorted by length, cut greedily into batches whose padded size len(batch) x T is at most max_tokens."""
    for index, length in enumerate(lengths):
        if length > max_tokens:
            raise ValueError(f"index {index}: length {length} exceeds the budget of {max_tokens} tokens")
    order = sorted(range(len(lengths)), key=lengths.__getitem__)        # stable: equal lengths keep index order
    batches: list[list[int]] = []
    longest = 0
    for index in order:
        candidate_longest = max(longest, lengths[index])
        if batches and (len(batches[-1]) + 1) * candidate_longest <= max_tokens:
            batches[-1].append(index)
            longest = candidate_longest
        else:
            batches.append([index])
            longest = lengths[index]
    return batches


def padding_fraction(lengths: list[int], batches: list[list[int]]) -> float:
    """The share of the batches' padded positions (len(batch) x longest, summed) that hold padding."""
    padding, positions = 0, 0
    for batch in batches:
        batch_lengths = [lengths[i] for i in batch]
        width = max(batch_lengths)
        positions += width * len(batch)
        padding += sum(width - n for n in batch_lengths)
    return padding / positions
