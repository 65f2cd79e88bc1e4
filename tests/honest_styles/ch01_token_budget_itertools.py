# exercise: ch01_tokens/token_budget_batches
# style: itertools and functools, a generator
import itertools
from functools import reduce


def token_budget_batches(lengths, budget):
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches, batch = [], []
    for index in order:
        if batch and (len(batch) + 1) * max(lengths[i] for i in itertools.chain(batch, [index])) > budget:
            batches.append(batch)
            batch = []
        batch.append(index)
    if batch:
        batches.append(batch)
    assert reduce(lambda n, b: n + len(b), batches, 0) == len(lengths)
    return batches
