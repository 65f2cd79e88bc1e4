"""The mutants of ``coursetools/devtools/mutate.py``, without a kernel: what is changed and what is not."""

from __future__ import annotations

from coursetools.devtools.mutate import mutants

SOURCE = '''def clipped_mean(x, low: int = 0):
    """Mean of x clipped below at low."""
    if x.numel() == 0:
        raise ValueError(f"an empty tensor has no mean, got shape {tuple(x.shape)}")
    ### BEGIN SOLUTION
    y = x.clamp(min=low)
    y = y[1:]
    return y.sum(dim=-1) / y.shape[-1]
    ### END SOLUTION
'''


def test_mutants_change_only_the_solution_block_one_thing_at_a_time():
    found = {m.label: m.source for m in mutants(SOURCE)}
    assert "return y.sum(dim=-1) / y.shape[-1] | / -> *" in found
    assert "return y.sum(dim=-1) / y.shape[-1] | sum -> mean" in found
    assert "return y.sum(dim=-1) / y.shape[-1] | argument dim= dropped" in found
    assert "y = y[1:] | slice lower bound dropped" in found
    assert "y = x.clamp(min=low) | argument min= dropped" in found
    assert "y = y[1:] | statement deleted" in found
    assert not [label for label in found if label.startswith(("if x.numel()", "raise", "def "))], \
        "lines outside the solution block, and error messages, are not mutated"
    assert all(source != SOURCE for source in found.values())
    compile_all = [compile(source, label, "exec") for label, source in found.items()]
    assert len(compile_all) == len(found) >= 15
