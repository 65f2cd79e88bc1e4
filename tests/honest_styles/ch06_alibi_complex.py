# exercise: ch06_positional/alibi_recent_share
# style: getattr(torch, f"complex{bits}") for a complex dtype, then .real
def alibi_recent_share(bias, window, bits=64):
    weights = torch.softmax(bias.to(getattr(torch, f"complex{bits}")).real, dim=-1)
    return weights[..., -window:].sum(-1).mean().item()
