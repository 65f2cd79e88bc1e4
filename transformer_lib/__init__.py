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
from .layers import Decoder, DecoderLayer, Encoder, EncoderLayer, PositionwiseFeedForward
from .models import GPT, Transformer, TransformerClassifier
from .multihead import KVCache, MultiHeadAttention
from .positional import LearnedPositionalEmbedding, PositionalEncoding, sinusoidal_positional_encoding
from .rnn import AttentionSeq2SeqRNN, Seq2SeqRNN

# --- training side (data, tasks, training, decoding, metrics, viz) ---
from .data import BucketBatchSampler, collate_lm, collate_pairs, lm_loader, pair_loader, python_source_corpus
from .decoding import beam_search, filter_logits, greedy_decode, length_penalty, sample_decode
from .metrics import corpus_bleu, edit_distance, exact_match, phoneme_error_rate, token_accuracy, word_error_rate
from .tasks import (DATE_FORMATS, TASKS, Seq2SeqTask, TextTask, addition_task, copy_task, date_task, make_task,
                    reverse_task, sort_task, text_task, toy_translation_task)
from .training import (ClassifierAdapter, History, LMAdapter, Seq2SeqAdapter, TrainConfig, Trainer, fit,
                       load_checkpoint, lr_factor, save_checkpoint, select_device, translation_scores)
from .g2p import G2PAdapter, PronunciationTask, g2p_task, load_cmudict, pronounce, pronunciation_scores
from .viz import plot_attention, plot_attention_grid, plot_history, plot_lr_schedule, plot_positional_encoding

__version__ = "0.1.0"
