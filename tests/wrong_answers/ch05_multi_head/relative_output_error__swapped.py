# Divided by the approximation's norm instead of the reference's.
def relative_output_error(reference, approximation, x):
    with torch.no_grad():
        expected, _ = reference(x, x, x)
        approximated, _ = approximation(x, x, x)
    return float((approximated - expected).norm() / approximated.norm())
