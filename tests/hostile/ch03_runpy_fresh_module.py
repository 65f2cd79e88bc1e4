# exercise: ch03_bahdanau/coverage_attention
# attack: the forbidden library module loaded afresh with runpy (its code objects are not the swapped ones)
import runpy

_fresh = runpy.run_module("transformer_lib.attention")


def coverage_attention(query, keys, coverage, mask=None, module=None):
    return _fresh["AdditiveAttention"](query.shape[-1], keys.shape[-1], 8)(query, keys, mask)
