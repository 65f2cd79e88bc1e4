"""Decoding: EOS-terminated, padded batches; beam size 1 is greedy; sampling filters."""

import math

import pytest
import torch
from torch import nn

from transformer_lib.decoding import (
    beam_search,
    filter_logits,
    greedy_decode,
    length_penalty,
    sample_decode,
    sample_next_token,
    sequence_log_prob,
)

from library_helpers import TinyEncDec

BOS, EOS, PAD = 1, 2, 0


class Scripted(nn.Module):
    """Says token 5, 6, 7, ... and then <eos> after ``src[b, 0]`` tokens."""

    def encode(self, src):
        return src.float()[..., None]

    def decode(self, tgt, memory, src):
        B, T = tgt.shape
        logits = torch.zeros(B, T, 12)
        for b in range(B):
            for t in range(T):
                logits[b, t, EOS if t >= src[b, 0] else 5 + t] = 10.0
        return logits


def rows(*lengths):
    """A source batch asking :class:`Scripted` for these output lengths."""
    return torch.tensor(lengths)[:, None].repeat(1, 3)


def test_greedy_stops_at_eos_and_pads():
    out = greedy_decode(Scripted(), rows(1, 3, 2), max_len=10)
    assert out.tolist() == [[5, EOS, PAD, PAD], [5, 6, 7, EOS], [5, 6, EOS, PAD]]


def test_max_len_cuts_rows_without_eos():
    out = greedy_decode(Scripted(), rows(8, 1), max_len=4)
    assert out.tolist() == [[5, 6, 7, 8], [5, EOS, PAD, PAD]]


@pytest.mark.parametrize("decode", [
    lambda m, s: beam_search(m, s, max_len=10, beam_size=3),
    lambda m, s: sample_decode(m, s, max_len=10, generator=torch.Generator().manual_seed(0)),
])
def test_other_decoders_are_eos_terminated_and_padded(decode):
    out = decode(Scripted(), rows(1, 3, 2))
    assert out.tolist() == [[5, EOS, PAD, PAD], [5, 6, 7, EOS], [5, 6, EOS, PAD]]


def test_beam_size_one_equals_greedy():
    torch.manual_seed(0)
    model = TinyEncDec().eval()
    src = torch.randint(3, 11, (16, 7))
    greedy = greedy_decode(model, src, max_len=12)
    assert (greedy == EOS).any() and (greedy == PAD).any()
    assert torch.equal(beam_search(model, src, max_len=12, beam_size=1), greedy)


def test_beam_finds_a_likelier_sequence_than_greedy():
    torch.manual_seed(1)
    model = TinyEncDec().eval()
    src = torch.randint(3, 11, (32, 5))

    with torch.no_grad():
        greedy, beam = greedy_decode(model, src, max_len=6), beam_search(model, src, max_len=6, beam_size=5, alpha=0.0)
    beam_lp, greedy_lp = sequence_log_prob(model, src, beam), sequence_log_prob(model, src, greedy)
    assert (beam_lp >= greedy_lp - 1e-5).all() and (beam_lp > greedy_lp + 1e-3).any()


def test_sequence_log_prob_sums_the_steps_up_to_eos():
    """Each row's score is the sum of the log-probabilities the model gave its tokens one step at a
    time, <eos> included; the padding after it and a row cut by max_len (no <eos>) are handled."""
    torch.manual_seed(0)
    model = TinyEncDec().eval()
    src = torch.randint(3, 11, (16, 7))
    ys = greedy_decode(model, src, max_len=12)
    assert (ys == PAD).any() and ((ys != EOS).all(dim=1)).any()  # padded rows and a row cut by max_len
    expected = torch.zeros(len(ys))
    with torch.no_grad():
        memory = model.encode(src)
        for b in range(len(ys)):
            prefix = torch.tensor([[BOS]])
            for token in ys[b].tolist():
                if token == PAD:
                    break
                expected[b] += model.decode(prefix, memory[b:b + 1], src[b:b + 1])[0, -1].log_softmax(-1)[token]
                prefix = torch.cat([prefix, torch.tensor([[token]])], dim=1)
    assert torch.allclose(sequence_log_prob(model, src, ys), expected, atol=1e-5)
    scripted = sequence_log_prob(Scripted(), rows(1, 3), torch.tensor([[5, EOS, PAD, PAD], [5, 6, 7, EOS]]))
    per_token = -math.log(1 + 11 * math.exp(-10))  # a logit of 10 against 11 zeros
    assert torch.allclose(scripted, torch.tensor([2, 4]) * per_token, atol=1e-6)  # 2 and 4 tokens, <eos> included
    with pytest.raises(ValueError, match=r"ys must be \(2, L\)"):
        sequence_log_prob(Scripted(), rows(1, 3), torch.tensor([5, EOS]))


def test_length_penalty_is_wu_et_al():
    assert length_penalty(torch.tensor(1.0), 1.0).item() == pytest.approx(1.0)
    assert length_penalty(torch.tensor(7.0), 0.5).item() == pytest.approx(2 ** 0.5)


def test_filter_logits_top_k_and_top_p():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    assert torch.isinf(filter_logits(logits, top_k=2)).tolist() == [[False, False, True, True]]
    assert torch.isinf(filter_logits(logits, top_p=0.7)).tolist() == [[False, False, True, True]]
    assert torch.isinf(filter_logits(logits, top_p=0.1)).tolist() == [[False, True, True, True]]


def test_sample_next_token_respects_top_k_top_p_and_greedy():
    logits = torch.tensor([[0.0, 5.0, 1.0, 4.0]]).expand(200, 4)
    assert torch.equal(sample_next_token(logits, temperature=0), torch.ones(200, 1, dtype=torch.long))
    tokens = sample_next_token(logits, top_k=2, generator=torch.Generator().manual_seed(0))
    assert set(tokens.flatten().tolist()) == {1, 3}
    nucleus = sample_next_token(logits, top_p=0.5, generator=torch.Generator().manual_seed(0))
    assert set(nucleus.flatten().tolist()) == {1}


def test_sampling_is_seeded_and_temperature_checked():
    model = TinyEncDec().eval()
    src = torch.randint(3, 11, (4, 5))
    a, b = (sample_decode(model, src, 8, top_k=5, generator=torch.Generator().manual_seed(3)) for _ in range(2))
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="temperature must be > 0, got 0"):
        sample_decode(model, src, 8, temperature=0)


def test_decoding_requires_the_protocol():
    with pytest.raises(TypeError, match="encode.*decode.*got Linear"):
        greedy_decode(nn.Linear(2, 2), torch.ones(1, 2, dtype=torch.long), 3)
    with pytest.raises(ValueError, match=r"\(B, S\)"):
        greedy_decode(TinyEncDec(), torch.ones(3, dtype=torch.long), 3)


def nucleus_mass(logits, kept):
    """Float64 probability mass of the ``kept`` tokens of each row, and the same without the least likely."""
    probs = logits.double().softmax(-1)
    least = probs.masked_fill(~kept, float("inf")).min(-1).values
    mass = (probs * kept).sum(-1)
    return mass, mass - least


@pytest.mark.parametrize("scale", [3.0, 10.0])
def test_top_p_one_keeps_every_token(scale):
    logits = torch.randn(2, 128_256, generator=torch.Generator().manual_seed(0)) * scale
    assert torch.equal(filter_logits(logits, top_p=1.0), logits)


@pytest.mark.parametrize("top_p", [0.5, 0.9, 0.999, 1 - 1e-6])
def test_top_p_keeps_the_smallest_set_reaching_p_in_a_large_vocabulary(top_p):
    logits = torch.randn(3, 128_256, generator=torch.Generator().manual_seed(1)) * 3
    kept = filter_logits(logits, top_p=top_p).isfinite()
    mass, mass_without_least = nucleus_mass(logits, kept)
    assert (mass >= top_p).all() and (mass_without_least < top_p).all()


def test_top_p_keeps_every_token_tied_with_the_last_of_the_nucleus():
    logits = torch.tensor([[2.0, 1.0, 1.0, 1.0, 0.0]])  # the nucleus for 0.5 ends inside the tie
    assert torch.isinf(filter_logits(logits, top_p=0.5)).tolist() == [[False, False, False, False, True]]
    order = torch.randperm(5, generator=torch.Generator().manual_seed(2))
    assert torch.equal(filter_logits(logits[:, order], top_p=0.5), filter_logits(logits, top_p=0.5)[:, order])


@pytest.mark.parametrize("top_p", [0.0, -0.1, 1.5])
def test_top_p_out_of_range_is_refused(top_p):
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\]"):
        filter_logits(torch.zeros(1, 4), top_p=top_p)
