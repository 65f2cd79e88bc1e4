"""transformer_lib.tokens: vocabularies, tokenizers, padding, masks, inputs as N vectors."""

import json

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.tokens import (
    SPECIAL_TOKENS,
    Vocab,
    char_tokenize,
    frame_signal,
    lengths_to_mask,
    one_hot_embed,
    pad_batch,
    patchify,
    word_tokenize,
)

CORPUS = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"], ["the", "end"]]


# --- tokenizers -----------------------------------------------------------------------------

def test_char_tokenize_keeps_every_character():
    assert char_tokenize("hi there!") == ["h", "i", " ", "t", "h", "e", "r", "e", "!"]
    assert char_tokenize("") == []


def test_word_tokenize_splits_words_and_punctuation():
    assert word_tokenize("Hello, world!  It's 2 o'clock.") == [
        "Hello", ",", "world", "!", "It", "'", "s", "2", "o", "'", "clock", "."]
    assert word_tokenize("The CAT", lowercase=True) == ["the", "cat"]
    assert word_tokenize("  \n ") == []


@pytest.mark.parametrize("tokenize", [char_tokenize, word_tokenize])
def test_tokenizers_refuse_non_strings(tokenize):
    with pytest.raises(TypeError, match="must be a str, got list"):
        tokenize(["a"])


# --- Vocab ----------------------------------------------------------------------------------

def test_special_tokens_have_fixed_ids():
    vocab = Vocab.build(CORPUS)
    assert SPECIAL_TOKENS == ("<pad>", "<bos>", "<eos>", "<unk>")
    assert (vocab.pad_id, vocab.bos_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2, 3)
    assert vocab.tokens[:4] == list(SPECIAL_TOKENS)
    assert [vocab.token_to_id(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3]
    assert len(Vocab()) == 4


def test_build_orders_by_count_then_alphabetically():
    vocab = Vocab.build(CORPUS)
    # the: 3; cat, sat: 2; a, dog, end, ran: 1 (ties alphabetical)
    assert vocab.tokens[4:] == ["the", "cat", "sat", "a", "dog", "end", "ran"]
    assert len(vocab) == 11


def test_build_is_deterministic_whatever_the_corpus_order():
    assert Vocab.build(CORPUS) == Vocab.build(list(reversed(CORPUS)))
    assert Vocab.build(iter(CORPUS)) == Vocab.build(CORPUS)  # any iterable, read once


def test_min_freq_and_max_size():
    assert Vocab.build(CORPUS, min_freq=2).tokens[4:] == ["the", "cat", "sat"]
    assert Vocab.build(CORPUS, min_freq=4).tokens == list(SPECIAL_TOKENS)
    capped = Vocab.build(CORPUS, max_size=6)  # special tokens count towards max_size
    assert len(capped) == 6 and capped.tokens[4:] == ["the", "cat"]


def test_special_tokens_in_the_corpus_are_not_added_twice():
    vocab = Vocab.build([["<pad>", "<unk>", "x"], ["<eos>", "x"]])
    assert vocab.tokens == list(SPECIAL_TOKENS) + ["x"]


def test_extra_specials_follow_the_fixed_four_and_are_skipped_when_decoding():
    vocab = Vocab.build(CORPUS, extra_specials=["<sep>"])
    assert vocab.tokens[:6] == list(SPECIAL_TOKENS) + ["<sep>", "the"]
    assert vocab.special_ids == {0, 1, 2, 3, 4}
    assert vocab.decode([5, 4, 6]) == ["the", "cat"]


@pytest.mark.parametrize("kwargs, message", [
    ({"min_freq": 0}, "min_freq must be an integer >= 1, got 0"),
    ({"max_size": 3}, "max_size must be an integer >= 4"),
    ({"max_size": 4, "extra_specials": ["<sep>"]}, "max_size must be an integer >= 5"),
])
def test_build_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Vocab.build(CORPUS, **kwargs)


def test_build_rejects_a_string_as_a_sequence_of_tokens():
    with pytest.raises(TypeError, match="sequence of tokens such as list"):
        Vocab.build(["the cat"])


def test_constructor_rejects_duplicates_and_non_strings():
    with pytest.raises(ValueError, match="'a' twice"):
        Vocab(["a", "b", "a"])
    with pytest.raises(ValueError, match="'<unk>' twice"):
        Vocab(["<unk>"])
    with pytest.raises(TypeError, match="must be a str, got int"):
        Vocab(["a", 7])


def test_encode_decode_round_trip():
    vocab = Vocab.build(CORPUS)
    ids = vocab.encode(["the", "dog", "sat"], add_bos=True, add_eos=True)
    assert ids == [1, 4, 8, 6, 2]
    assert all(isinstance(i, int) for i in ids)
    assert vocab.decode(ids) == ["the", "dog", "sat"]
    assert vocab.decode(ids, skip_special=False) == ["<bos>", "the", "dog", "sat", "<eos>"]
    assert vocab.decode(torch.tensor(ids)) == ["the", "dog", "sat"]
    for sentence in CORPUS:
        assert vocab.decode(vocab.encode(sentence)) == sentence


def test_unknown_tokens_become_unk_and_stay_visible_when_decoding():
    vocab = Vocab.build(CORPUS)
    assert "zebra" not in vocab and "the" in vocab
    assert vocab.token_to_id("zebra") == vocab.unk_id
    ids = vocab.encode(["the", "zebra"], add_eos=True)
    assert ids == [4, 3, 2]
    assert vocab.decode(ids + [0, 0]) == ["the", "<unk>"]  # padding dropped, <unk> kept


def test_character_vocabulary():
    vocab = Vocab.build([char_tokenize("abba"), char_tokenize("cab")])
    assert vocab.tokens[4:] == ["a", "b", "c"]
    assert "".join(vocab.decode(vocab.encode(char_tokenize("cab")))) == "cab"


def test_encode_and_lookups_explain_bad_input():
    vocab = Vocab.build(CORPUS)
    with pytest.raises(TypeError, match="got a str: 'the cat'"):
        vocab.encode("the cat")
    with pytest.raises(TypeError, match="must be a str, got int"):
        vocab.encode(["the", 5])
    with pytest.raises(IndexError, match=r"id must be in \[0, 10\], got 11"):
        vocab.id_to_token(11)
    with pytest.raises(IndexError, match="got -1"):
        vocab.decode([4, -1])
    with pytest.raises(ValueError, match=r"1-D tensor of ids \(T,\), got shape \(1, 2\)"):
        vocab.decode(torch.tensor([[4, 5]]))


def test_to_dict_from_dict_round_trip_through_json():
    vocab = Vocab.build(CORPUS, min_freq=2, extra_specials=["<sep>"])
    restored = Vocab.from_dict(json.loads(json.dumps(vocab.to_dict())))
    assert restored == vocab
    assert restored.special_ids == vocab.special_ids
    assert restored.encode(["the", "zebra"]) == vocab.encode(["the", "zebra"])


def test_from_dict_checks_the_special_tokens():
    with pytest.raises(ValueError, match="must start with"):
        Vocab.from_dict({"tokens": ["<unk>", "<pad>", "<bos>", "<eos>", "a"]})
    with pytest.raises(ValueError, match="must follow the four fixed ones"):
        Vocab.from_dict({"tokens": list(SPECIAL_TOKENS) + ["a", "<sep>"], "extra_specials": ["<sep>"]})


def test_repr_is_short():
    assert repr(Vocab(["a", "b"])) == "Vocab(vocab_size=6, tokens=['a', 'b'])"


# --- padding and masks ----------------------------------------------------------------------

def test_pad_batch_pads_on_the_right_and_returns_lengths():
    ids, lengths = pad_batch([[5, 6, 7], [8], []], pad_id=0)
    assert ids.dtype == torch.long and lengths.dtype == torch.long
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0], [0, 0, 0]]
    assert lengths.tolist() == [3, 1, 0]


def test_pad_batch_accepts_tensors_a_pad_id_and_max_len():
    ids, lengths = pad_batch([torch.tensor([4, 5]), torch.tensor([6])], pad_id=9, max_len=4)
    assert ids.tolist() == [[4, 5, 9, 9], [6, 9, 9, 9]]
    assert lengths.tolist() == [2, 1]


def test_pad_batch_errors_name_what_was_expected_and_received():
    with pytest.raises(ValueError, match=r"sequences\[1\] has length 3, longer than max_len=2"):
        pad_batch([[1], [1, 2, 3]], max_len=2)
    with pytest.raises(ValueError, match="empty batch"):
        pad_batch([])
    with pytest.raises(TypeError, match="must be a list of id sequences, got Tensor"):
        pad_batch(torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(TypeError, match=r"each id of sequences\[0\] must be an int, got float"):
        pad_batch([[1.5]])
    with pytest.raises(TypeError, match=r"sequences\[0\] must be a 1-D integer tensor"):
        pad_batch([torch.tensor([1.0, 2.0])])


def test_lengths_to_mask_is_true_at_real_tokens():
    mask = lengths_to_mask(torch.tensor([3, 1, 0]))
    assert mask.dtype == torch.bool
    assert mask.tolist() == [[True, True, True], [True, False, False], [False, False, False]]
    assert lengths_to_mask(torch.tensor([1]), max_len=3).tolist() == [[True, False, False]]


def test_mask_agrees_with_padding():
    ids, lengths = pad_batch([[5, 6, 7], [8], [9, 9]], pad_id=0)
    assert torch.equal(lengths_to_mask(lengths), ids != 0)


def test_lengths_to_mask_errors():
    with pytest.raises(TypeError, match=r"1-D integer tensor \(B,\), got \(2, 1\)"):
        lengths_to_mask(torch.tensor([[1], [2]]))
    with pytest.raises(TypeError, match="got list"):
        lengths_to_mask([1, 2])
    with pytest.raises(ValueError, match=">= 0"):
        lengths_to_mask(torch.tensor([2, -1]))
    with pytest.raises(ValueError, match="length of 3 does not fit in max_len=2"):
        lengths_to_mask(torch.tensor([3]), max_len=2)


# --- inputs as N vectors --------------------------------------------------------------------

def test_one_hot_embed_equals_the_embedding_lookup():
    torch.manual_seed(0)
    weight = torch.randn(7, 5, dtype=torch.float64)
    ids = torch.randint(0, 7, (3, 4))
    out = one_hot_embed(ids, weight)
    assert out.shape == (3, 4, 5) and out.dtype == torch.float64
    assert torch.equal(out, F.embedding(ids, weight))
    assert torch.equal(out, weight[ids])


def test_one_hot_embed_errors():
    with pytest.raises(ValueError, match=r"\(vocab_size, d_model\), got shape \(7,\)"):
        one_hot_embed(torch.tensor([1]), torch.zeros(7))
    with pytest.raises(TypeError, match="integer tensor, got dtype torch.float32"):
        one_hot_embed(torch.tensor([1.0]), torch.zeros(7, 2))


def test_patchify_matches_unfold_and_keeps_channels_together():
    images = torch.arange(2 * 3 * 4 * 6, dtype=torch.float32).reshape(2, 3, 4, 6)
    patches = patchify(images, 2)
    assert patches.shape == (2, 6, 12)  # N = (4/2) * (6/2), D = 3 * 2 * 2
    assert torch.equal(patches, F.unfold(images, kernel_size=2, stride=2).transpose(1, 2))
    # patch 4 = grid row 1, column 1: rows 2-3, columns 2-3; its first 4 entries are channel 0
    assert torch.equal(patches[0, 4, :4], images[0, 0, 2:4, 2:4].reshape(4))


def test_patchify_rejects_sizes_that_do_not_divide():
    with pytest.raises(ValueError, match="p=3 for H=4, W=6"):
        patchify(torch.zeros(1, 1, 4, 6), 3)
    with pytest.raises(ValueError, match=r"\(B, C, H, W\), got shape \(4, 6\)"):
        patchify(torch.zeros(4, 6), 2)


def test_frame_signal_cuts_windows():
    signal = torch.arange(10.0)[None, :]
    frames = frame_signal(signal, frame_len=4)
    assert frames.tolist() == [[[0, 1, 2, 3], [4, 5, 6, 7]]]  # the last 2 samples are dropped
    overlapping = frame_signal(signal, frame_len=4, hop=2)
    assert overlapping.shape == (1, 4, 4) and overlapping[0, 1].tolist() == [2, 3, 4, 5]
    with pytest.raises(ValueError, match="frame_len=11, hop=11, L=10"):
        frame_signal(signal, 11)
