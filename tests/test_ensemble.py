"""Ensemble: the log of the members' mean probabilities; decodes like one model; bad members refused."""

import pytest
import torch

from transformer_lib.decoding import beam_search, greedy_decode
from transformer_lib.ensemble import Ensemble
from transformer_lib.models import Transformer
from transformer_lib.rnn import AttentionSeq2SeqRNN

from library_helpers import TinyEncDec


def members(n: int, vocab_size: int = 11) -> list[TinyEncDec]:
    models = []
    for seed in range(n):
        torch.manual_seed(seed)
        models.append(TinyEncDec(vocab_size).eval())
    return models


def test_decode_is_the_log_of_the_mean_probability():
    models = members(3)
    src, tgt = torch.randint(3, 11, (4, 5)), torch.randint(3, 11, (4, 6))
    out = Ensemble(models).decode(tgt, Ensemble(models).encode(src), src)  # (B, T, vocab_size)
    mean = torch.stack([m(src, tgt).softmax(-1) for m in models]).mean(0)
    assert out.shape == (4, 6, 11)
    torch.testing.assert_close(out.exp(), mean)
    torch.testing.assert_close(out.exp().sum(-1), torch.ones(4, 6))


def test_worked_example_two_members_disagreeing():
    """Member A puts 0.9 on token 0, member B 0.3: the ensemble 0.6; its argmax follows the mean, not a vote."""
    class Fixed(torch.nn.Module):
        def __init__(self, probs):
            super().__init__()
            self.logits = torch.nn.Parameter(torch.tensor(probs).log())

        def encode(self, src):
            return src.float()

        def decode(self, tgt, memory, src):
            return self.logits.expand(*tgt.shape, -1)

    a, b = Fixed([0.9, 0.05, 0.05]), Fixed([0.3, 0.7, 0.0])
    src = tgt = torch.zeros(1, 1, dtype=torch.long)
    probs = Ensemble([a, b]).decode(tgt, Ensemble([a, b]).encode(src), src).exp()[0, 0]
    torch.testing.assert_close(probs, torch.tensor([0.6, 0.375, 0.025]))


def test_an_ensemble_of_one_decodes_as_its_member():
    (model,) = members(1)
    src = torch.randint(3, 11, (5, 4))
    assert torch.equal(greedy_decode(Ensemble([model]), src, 8), greedy_decode(model, src, 8))
    assert torch.equal(beam_search(Ensemble([model]), src, 8, beam_size=3), beam_search(model, src, 8, beam_size=3))


def test_beam_search_copies_every_members_memory():
    """A Transformer and a recurrent model (whose memory is a NamedTuple) decode together in a beam."""
    torch.manual_seed(0)
    pair = Ensemble([Transformer(11, 11, 16, 2, 1, 1, 32, 0.0, max_len=32), AttentionSeq2SeqRNN(11, 11, 8, 8)]).eval()
    src = torch.randint(3, 11, (3, 5))
    out = beam_search(pair, src, 6, beam_size=2)
    assert out.shape[0] == 3 and out.shape[1] <= 6


def test_bad_members_are_refused():
    with pytest.raises(ValueError, match="at least one model"):
        Ensemble([])
    with pytest.raises(TypeError, match=r"models\[1\] must have encode"):
        Ensemble([TinyEncDec(), torch.nn.Linear(2, 2)])
    mixed = Ensemble([TinyEncDec(11), TinyEncDec(12)])
    src = torch.randint(3, 11, (2, 3))
    with pytest.raises(ValueError, match="same target vocabulary"):
        mixed.decode(src, mixed.encode(src), src)
