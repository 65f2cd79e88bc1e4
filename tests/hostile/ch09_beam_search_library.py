# exercise: ch09_transformer/beam_search
# attack: the library's beam search under the student's name
from transformer_lib.decoding import beam_search as _library_beam


def beam_search(model, src, beam_size, max_len, bos_id, eos_id, alpha=0.6):
    return _library_beam(model, src, beam_size, max_len, bos_id, eos_id, alpha)
