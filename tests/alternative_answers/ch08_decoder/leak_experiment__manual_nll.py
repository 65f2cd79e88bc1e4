# Writes the cross-entropy by hand (log_softmax + gather, averaged), zero_grad before the forward pass, and the
# training loss averaged with a tensor.
def leak_experiment(causal: bool, steps: int = 80, seed: int = 0) -> tuple[float, float]:
    """Train TinyLM on random tokens with or without the causal mask -> (training loss, causal evaluation loss)."""
    def mean_nll(logits, targets):
        log_probs = torch.log_softmax(logits, dim=-1)
        return -log_probs.gather(-1, targets.unsqueeze(-1)).mean()

    torch.manual_seed(seed)
    model = TinyLM()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(seed)
    mask = causal_mask(8) if causal else None
    history = []
    for _ in range(steps):
        batch = torch.randint(0, 8, (16, 9), generator=generator)
        inputs, targets = batch[:, :8], batch[:, 1:]
        optimizer.zero_grad()
        loss = mean_nll(model(inputs, mask), targets)
        loss.backward()
        optimizer.step()
        history.append(loss.detach())
    training_loss = float(torch.stack(history[-10:]).mean())
    batch = torch.randint(0, 8, (256, 9), generator=generator)
    with torch.no_grad():
        evaluation_loss = float(mean_nll(model(batch[:, :8], causal_mask(8)), batch[:, 1:]))
    return training_loss, evaluation_loss
