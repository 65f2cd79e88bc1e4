"""Tests for transformer_lib.rnn: the GRU encoder-decoders of chapters 2-3."""

import pytest
import torch

from transformer_lib.decoding import beam_search, greedy_decode
from transformer_lib.rnn import AttentionSeq2SeqRNN, Seq2SeqRNN

V, PAD, BOS, EOS = 9, 0, 1, 2
SRC = torch.tensor([[3, 4, 5, 6], [7, 8, PAD, PAD], [PAD] * 4])
TGT_IN = torch.tensor([[BOS, 5, 6], [BOS, 7, PAD], [BOS, 3, 4]])


def build(cls):
    torch.manual_seed(0)
    return cls(V, V + 1, embed_dim=6, hidden_dim=8, pad_id=PAD).double().eval()


@pytest.mark.parametrize("cls", [Seq2SeqRNN, AttentionSeq2SeqRNN])
def test_padding_changes_nothing_and_fully_padded_rows_are_finite(cls):
    model = build(cls)
    logits = model(SRC, TGT_IN)
    assert logits.shape == (3, 3, V + 1) and torch.isfinite(logits).all()
    longer = torch.cat([SRC, torch.full((3, 2), PAD)], dim=1)  # more padding
    torch.testing.assert_close(model(longer, TGT_IN)[:2], logits[:2])
    encoded = model.encode(SRC)
    assert encoded.states.shape == (3, 4, 8) and encoded.final.shape == (3, 8)
    torch.testing.assert_close(encoded.final[1], encoded.states[1, 1])  # state after the last real token


@pytest.mark.parametrize("cls", [Seq2SeqRNN, AttentionSeq2SeqRNN])
def test_future_target_tokens_change_no_earlier_logits(cls):
    model = build(cls)
    changed = TGT_IN.clone()
    changed[:, 2] = 8
    torch.testing.assert_close(model(SRC, changed)[:, :2], model(SRC, TGT_IN)[:, :2])


def test_only_the_attention_model_sees_more_than_the_final_state():
    plain, attentive = build(Seq2SeqRNN), build(AttentionSeq2SeqRNN)
    src = torch.tensor([[3, 4, 5, 6]])
    # Two sources with the same final encoder state cannot be told apart by the plain model.
    for model in (plain, attentive):
        source = model.encode(src)
        other = source._replace(states=source.states + 1.0)
        same = torch.allclose(model.decode_step(TGT_IN[:1, 0], source.final, source)[0],
                              model.decode_step(TGT_IN[:1, 0], source.final, other)[0])
        assert same == (model is plain)


def test_attention_model_returns_alignment_that_ignores_padding():
    model = build(AttentionSeq2SeqRNN)
    logits, weights = model(SRC, TGT_IN, return_attention=True)
    torch.testing.assert_close(logits, model(SRC, TGT_IN))
    assert weights.shape == (3, 3, 4)
    torch.testing.assert_close(weights[:2].sum(-1), torch.ones(2, 3, dtype=torch.float64))
    assert torch.all(weights[1, :, 2:] == 0) and torch.all(weights[2] == 0)


@pytest.mark.parametrize("cls", [Seq2SeqRNN, AttentionSeq2SeqRNN])
def test_greedy_decoding_agrees_with_teacher_forcing_and_stops(cls):
    model = build(cls)
    out = greedy_decode(model, SRC, max_len=5, bos_id=BOS, eos_id=EOS, pad_id=PAD)
    assert out.shape[0] == 3 and out.shape[1] <= 5
    tgt_in = torch.cat([torch.full((3, 1), BOS), out[:, :-1]], dim=1)
    expected = model(SRC, tgt_in).argmax(-1)
    for b in range(3):  # every token up to and including the first EOS is the argmax
        row = out[b].tolist()
        stop = row.index(EOS) + 1 if EOS in row else len(row)
        assert row[:stop] == expected[b, :stop].tolist()
        assert all(t == PAD for t in row[stop:])


@pytest.mark.parametrize("cls", [Seq2SeqRNN, AttentionSeq2SeqRNN])
def test_beam_search_copies_the_encoded_source(cls):
    model = build(cls)
    greedy = greedy_decode(model, SRC, max_len=5)
    assert torch.equal(beam_search(model, SRC, max_len=5, beam_size=1), greedy)
    wide = beam_search(model, SRC, max_len=5, beam_size=3)
    assert wide.shape[0] == 3 and wide.shape[1] <= 5


def test_bad_token_ids_raise():
    model = build(Seq2SeqRNN)
    with pytest.raises(ValueError, match=r"src must be ids in \[0, vocab_size=9\), got values from 1 to 9"):
        model(torch.tensor([[9, 1]]), TGT_IN[:1])
    with pytest.raises(ValueError, match=r"tgt_in must be integer token ids of shape \(B, length\)"):
        model(SRC, torch.tensor([1, 2, 3]))


@pytest.mark.parametrize("cls", [Seq2SeqRNN, AttentionSeq2SeqRNN])
def test_step_by_step_decoding_runs_one_step_per_call_and_gives_the_full_logits(cls, monkeypatch):
    torch.manual_seed(0)
    model = cls(11, 13, 8, 16).eval()
    src = torch.randint(1, 11, (3, 5))
    tgt = torch.randint(1, 13, (3, 6))
    with torch.no_grad():
        full = model.decode(tgt, model.encode(src))
        memory = model.encode(src)
        steps = []
        original = model.decode_step
        monkeypatch.setattr(model, "decode_step", lambda *a: steps.append(1) or original(*a))
        for t in range(1, 7):
            logits = model.decode(tgt[:, :t], memory)
            assert logits.shape == (3, t, 13)
        torch.testing.assert_close(logits, full)
        assert len(steps) == 6, "each call that adds one token runs one decoder step"
        other = torch.cat([tgt[:, :3].flip(0), tgt[:, 3:]], dim=1)  # prefixes reordered, as beam search does
        torch.testing.assert_close(model.decode(other, memory), model.decode(other, model.encode(src)))
