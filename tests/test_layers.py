"""Tests for transformer_lib.layers: equality with PyTorch's layers, masking and equivariance properties."""

import pytest
import torch
from torch import nn

from transformer_lib.attention import causal_mask
from transformer_lib.layers import Decoder, DecoderLayer, Encoder, EncoderLayer, PositionwiseFeedForward
from transformer_lib.tokens import lengths_to_mask

D, H, D_FF = 8, 2, 16


def randomise(module):
    """Random weights everywhere (also in biases and layer norms), so that every copy is tested."""
    torch.manual_seed(0)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
    return module.double().eval()


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_equals_pytorch(norm_first, activation):
    theirs = randomise(nn.TransformerEncoderLayer(D, H, D_FF, dropout=0.0, activation=activation, batch_first=True,
                                                  norm_first=norm_first))
    ours = EncoderLayer.from_torch(theirs)
    x = torch.randn(3, 5, D, dtype=torch.float64, requires_grad=True)
    real = lengths_to_mask(torch.tensor([5, 4, 2]))
    for need_weights in (False, True):
        out = ours(x, real[:, None, None, :] & causal_mask(5), need_weights=need_weights)
        ref = theirs(x, src_mask=~causal_mask(5), src_key_padding_mask=~real)
        torch.testing.assert_close(out, ref)
        grad = torch.autograd.grad(out.pow(2).sum(), x)[0]
        torch.testing.assert_close(grad, torch.autograd.grad(ref.pow(2).sum(), x)[0])
    assert ours.self_attention_weights.shape == (3, H, 5, 5)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_decoder_layer_equals_pytorch(norm_first, activation):
    theirs = randomise(nn.TransformerDecoderLayer(D, H, D_FF, dropout=0.0, activation=activation, batch_first=True,
                                                  norm_first=norm_first))
    ours = DecoderLayer.from_torch(theirs)
    x = torch.randn(2, 4, D, dtype=torch.float64, requires_grad=True)
    memory = torch.randn(2, 6, D, dtype=torch.float64, requires_grad=True)
    tgt_real, src_real = lengths_to_mask(torch.tensor([4, 3])), lengths_to_mask(torch.tensor([6, 2]))
    out = ours(x, memory, tgt_real[:, None, None, :] & causal_mask(4), src_real[:, None, None, :], need_weights=True)
    ref = theirs(x, memory, tgt_mask=~causal_mask(4), tgt_key_padding_mask=~tgt_real, memory_key_padding_mask=~src_real)
    torch.testing.assert_close(out, ref)
    grads = torch.autograd.grad(out.pow(2).sum(), (x, memory))
    for a, b in zip(grads, torch.autograd.grad(ref.pow(2).sum(), (x, memory))):
        torch.testing.assert_close(a, b)
    assert ours.self_attention_weights.shape == (2, H, 4, 4)
    assert ours.cross_attention_weights.shape == (2, H, 4, 6)
    fused = ours(x, memory, tgt_real[:, None, None, :], src_real[:, None, None, :], is_causal=True)
    torch.testing.assert_close(fused, out)
    assert ours.self_attention_weights is None


def test_from_torch_rejects_sequence_first_layers():
    with pytest.raises(ValueError, match="batch_first=True"):
        EncoderLayer.from_torch(nn.TransformerEncoderLayer(D, H, D_FF, batch_first=False))


def test_feed_forward_is_position_wise_and_checks_activation():
    torch.manual_seed(0)
    ff = PositionwiseFeedForward(D, D_FF, activation="gelu")
    x = torch.randn(2, 5, D)
    torch.testing.assert_close(ff(x)[:, 3], ff(x[:, 3]))
    with pytest.raises(ValueError, match="'swish'"):
        PositionwiseFeedForward(D, D_FF, activation="swish")


def stacks(norm_first):
    torch.manual_seed(0)
    encoder = Encoder(2, D, H, D_FF, norm_first=norm_first).double().eval()
    decoder = Decoder(2, D, H, D_FF, norm_first=norm_first).double().eval()
    return encoder, decoder


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_without_positions_is_permutation_equivariant(norm_first):
    encoder, _ = stacks(norm_first)
    x = torch.randn(2, 6, D, dtype=torch.float64)
    permutation = torch.randperm(6)
    torch.testing.assert_close(encoder(x)[:, permutation], encoder(x[:, permutation]))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_future_and_padding_change_nothing_earlier(norm_first):
    _, decoder = stacks(norm_first)
    x = torch.randn(2, 5, D, dtype=torch.float64)
    memory = torch.randn(2, 4, D, dtype=torch.float64)
    memory_real = lengths_to_mask(torch.tensor([4, 2]))[:, None, None, :]
    out = decoder(x, memory, memory_mask=memory_real, is_causal=True)
    changed_x, changed_memory = x.clone(), memory.clone()
    changed_x[:, 3:] = torch.randn(2, 2, D, dtype=torch.float64)
    changed_memory[1, 2:] = 100.0  # the padded source positions of row 1
    again = decoder(changed_x, changed_memory, memory_mask=memory_real, is_causal=True)
    torch.testing.assert_close(again[:, :3], out[:, :3])
    assert not torch.allclose(again[:, 3:], out[:, 3:])


def test_encoder_padding_changes_no_real_position_and_full_padding_is_finite():
    encoder, _ = stacks(norm_first=False)
    x = torch.randn(2, 5, D, dtype=torch.float64)
    real = lengths_to_mask(torch.tensor([3, 0]), max_len=5)[:, None, None, :]
    out = encoder(x, real)
    changed = x.clone()
    changed[0, 3:] = torch.randn(2, D, dtype=torch.float64)
    torch.testing.assert_close(encoder(changed, real)[0, :3], out[0, :3])
    assert torch.isfinite(out).all()


def test_stacks_store_per_layer_weights_only_when_asked():
    encoder, decoder = stacks(norm_first=True)
    x = torch.randn(2, 5, D, dtype=torch.float64)
    encoder(x, need_weights=True)
    assert [layer.self_attention_weights.shape for layer in encoder.layers] == [(2, H, 5, 5)] * 2
    encoder(x)
    assert all(layer.self_attention_weights is None for layer in encoder.layers)
    decoder(x[:, :3], x, need_weights=True)
    assert [layer.cross_attention_weights.shape for layer in decoder.layers] == [(2, H, 3, 5)] * 2
