# Calls F.cross_entropy on (B, C, T) logits (class axis moved with transpose) instead of flattening, and sets the
# model to eval mode for the evaluation batch.
def leak_experiment(causal: bool, steps: int = 80, seed: int = 0) -> tuple[float, float]:
    """Train TinyLM on random tokens with or without the causal mask -> (training loss, causal evaluation loss)."""
    torch.manual_seed(seed)
    model = TinyLM()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(seed)
    losses = []
    for step in range(steps):
        batch = torch.randint(0, 8, (16, 9), generator=generator)
        logits = model(batch[:, :-1], causal_mask(8) if causal else None)  # (16, 8, 8)
        loss = F.cross_entropy(logits.transpose(1, 2), batch[:, 1:])       # (B, C, T) against (B, T)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    last = losses[max(0, len(losses) - 10):]
    test = torch.randint(0, 8, (256, 9), generator=generator)
    model.eval()
    with torch.no_grad():
        evaluation = F.cross_entropy(model(test[:, :-1], causal_mask(8)).transpose(1, 2), test[:, 1:])
    return sum(last) / len(last), float(evaluation)
