# The relative error of each sequence, averaged, instead of the norms over the whole batch.
def relative_output_error(reference, approximation, x):
    with torch.no_grad():
        expected, _ = reference(x, x, x)
        approximated, _ = approximation(x, x, x)
    return float(((approximated - expected).flatten(1).norm(dim=1) / expected.flatten(1).norm(dim=1)).mean())
