# exercise: ch03_bahdanau/coverage_attention
# attack: the forbidden module reloaded through importlib
import importlib

import transformer_lib.attention as attention


def coverage_attention(query, keys, coverage, mask=None, module=None):
    fresh = importlib.reload(attention)
    return fresh.AdditiveAttention(query.shape[-1], keys.shape[-1], 8)(query, keys, mask)
