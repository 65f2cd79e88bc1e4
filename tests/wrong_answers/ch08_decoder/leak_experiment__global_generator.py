# The batches drawn from the global generator (torch.randint without generator=): the result depends on the random state outside.
def leak_experiment(causal, steps=80, seed=0):
    torch.manual_seed(seed)
    model = TinyLM()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(seed)
    training_mask = causal_mask(8) if causal else None
    losses = []
    for _ in range(steps):
        batch = torch.randint(0, 8, (16, 9))
        logits = model(batch[:, :-1], training_mask)
        loss = F.cross_entropy(logits.reshape(-1, 8), batch[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    training_loss = sum(losses[-10:]) / len(losses[-10:])
    held_out = torch.randint(0, 8, (256, 9), generator=generator)
    with torch.no_grad():
        logits = model(held_out[:, :-1], causal_mask(8))
        evaluation_loss = F.cross_entropy(logits.reshape(-1, 8), held_out[:, 1:].reshape(-1)).item()
    return training_loss, evaluation_loss
