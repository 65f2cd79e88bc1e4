"""transformer_lib: the Transformer, built piece by piece, one module per idea.

Conventions kept by every module (see the book's notation page):

* batch first: activations are ``(B, T, d_model)``; per-head tensors ``(B, h, T, d_head)``;
* boolean masks, ``True`` means "may attend", broadcastable to ``(B, h, T, S)``;
* attention functions return ``(output, weights)``.
"""

# --- chapter 1: tokens and vocabularies (tokens.py) ---
from .tokens import (SPECIAL_TOKENS, Vocab, char_tokenize, frame_signal, lengths_to_mask, one_hot_embed,
                     pad_batch, patchify, word_tokenize)

# --- chapters 2-11: model side (attention, multihead, positional, layers, models, rnn, modern, rope, tiled) ---
from .attention import AdditiveAttention, causal_mask, masked_softmax, scaled_dot_product_attention
from .layers import Decoder, DecoderLayer, Encoder, EncoderLayer, PositionwiseFeedForward, SelfAttentionStack
from .models import GPT, Transformer, TransformerClassifier
from .modern import GroupedQueryAttention, ModernBlock, ModernConfig, RMSNorm, SwiGLUFeedForward
from .multihead import KVCache, MultiHeadAttention
from .positional import LearnedPositionalEmbedding, PositionalEncoding, sinusoidal_positional_encoding
from .rnn import AttentionSeq2SeqRNN, Seq2SeqRNN
from .rope import RotaryEmbedding
from .tiled import tiled_attention

# --- training side (data, corpus, tasks, decoding, ensemble, ngram, metrics, train_config, runtime, trainer,
#     objectives, viz) ---
from .data import BucketBatchSampler, RandomOffsetBatchSampler, collate_lm, collate_pairs, lm_loader, pair_loader
from .corpus import Corpus, python_corpus
from .decoding import beam_search, filter_logits, greedy_decode, length_penalty, sample_decode, sample_next_token
from .ensemble import Ensemble
from .ngram import NGramLM, best_counted_model
from .metrics import corpus_bleu, edit_distance, exact_match, phoneme_error_rate, token_accuracy, word_error_rate
from .tasks import (DATE_FORMATS, Seq2SeqTask, TextTask, addition_task, copy_task, date_task, reverse_task, sort_task,
                    split_of, text_task, toy_translation_task)
from .train_config import TrainConfig, lr_factor
from .runtime import load_checkpoint, save_checkpoint, seed_everything, select_device
from .run_state import History
from .trainer import Trainer, fit
from .objectives import ClassifierObjective, LMObjective, Seq2SeqObjective, translation_scores
# (``pronounce`` stays in ``transformer_lib.g2p``: ``transformer_lib.pronounce`` is the command-line module)
from .g2p import G2PObjective, PronunciationTask, g2p_task, load_cmudict, pronunciation_scores
from .viz import plot_attention, plot_attention_grid, plot_history, plot_lr_schedule, plot_positional_encoding

# --- chapter 12: after pretraining (finetune, lora, sft, dpo) ---
from .finetune import GPTClassifier, count_trainable, freeze, last_token_index
from .lora import DEFAULT_LORA_TARGETS, LoRALinear, add_lora, merge_lora
from .sft import IGNORE_INDEX, sft_batch, sft_example, sft_loss
from .dpo import DPOObjective, DPOOutput, answer_logprobs, dpo_loss, preference_batch, sequence_logprobs

__version__ = "0.1.0"
