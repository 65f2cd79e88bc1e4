"""transformer_lib: the Transformer, built piece by piece, one module per idea.

Conventions kept by every module (see the book's notation page):

* batch first: activations are ``(B, T, d_model)``; per-head tensors ``(B, h, T, d_head)``;
* boolean masks, ``True`` means "may attend", broadcastable to ``(B, h, T, S)``;
* attention functions return ``(output, weights)``.
"""

# --- chapter 1: tokens and vocabularies (tokens.py) ---
from .tokens import (SPECIAL_TOKENS, Vocab, char_tokenize, frame_signal, lengths_to_mask, one_hot_embed,
                     pad_batch, patchify, word_tokenize)

# --- chapters 2-10: model side (attention, multihead, positional, layers, models, rnn) ---
from .attention import (AdditiveAttention, causal_mask, masked_softmax, padding_mask,
                        scaled_dot_product_attention)

# --- training side (data, tasks, training, decoding, metrics, viz) ---

__version__ = "0.1.0"
