# Lazy combination: the library's BucketBatchSampler cut (sorted pools cut into batches of a fixed size) with the size the budget allows for each pool's longest sequence, and the given padding_fraction formula.
def token_budget_batches(lengths, max_tokens):
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches = []
    for start in range(0, len(order), 50):
        pool = order[start:start + 50]
        longest = max(lengths[i] for i in pool)
        if longest > max_tokens:
            raise ValueError(f"a sequence of length {longest} does not fit in max_tokens={max_tokens}")
        size = max_tokens // longest
        batches += [pool[i:i + size] for i in range(0, len(pool), size)]
    return batches


def padding_fraction(lengths, batches):
    real = sum(lengths[i] for batch in batches for i in batch)
    return 1 - real / sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
