"""Tests for transformer_lib.models: masking properties, KV-cache generation, weights access, bad input."""

import math

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.models import GPT, GPT2_INIT_STD, RESIDUAL_PROJECTIONS, Transformer, TransformerClassifier
from transformer_lib.modern import ModernConfig

V, D, H, PAD = 11, 8, 2, 0


def transformer(norm_first=False):
    torch.manual_seed(0)
    model = Transformer(V, V + 2, d_model=D, num_heads=H, d_ff=16, max_len=12, norm_first=norm_first, pad_id=PAD)
    return model.double().eval()


def gpt():
    torch.manual_seed(0)
    return GPT(V, D, H, num_layers=2, d_ff=16, max_len=10).double().eval()


def classifier(**kwargs):
    torch.manual_seed(0)
    return TransformerClassifier(V, 3, D, H, num_layers=2, d_ff=16, max_len=12, pad_id=PAD, **kwargs).double().eval()


def change_pad_embedding(embedding):
    with torch.no_grad():
        embedding.token.weight[PAD] = torch.randn_like(embedding.token.weight[PAD]) * 10


SRC = torch.tensor([[3, 4, 5, 6, 7], [8, 9, 2, PAD, PAD]])
TGT = torch.tensor([[1, 5, 6, 7], [1, 10, PAD, PAD]])


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_padding_changes_no_real_position(norm_first):
    model = transformer(norm_first)
    logits = model(SRC, TGT)
    assert logits.shape == (2, 4, V + 2)
    change_pad_embedding(model.src_embedding)
    change_pad_embedding(model.tgt_embedding)
    again = model(SRC, TGT)
    real = TGT != PAD
    torch.testing.assert_close(again[real], logits[real])
    assert not torch.allclose(again[~real], logits[~real])


def test_transformer_future_targets_change_nothing_earlier_and_decode_matches_forward():
    model = transformer()
    logits = model(SRC, TGT)
    changed = TGT.clone()
    changed[0, 2:] = torch.tensor([9, 9])
    again = model(SRC, changed)
    torch.testing.assert_close(again[:, :2], logits[:, :2])
    assert not torch.allclose(again[0, 2:], logits[0, 2:])
    memory = model.encode(SRC)
    assert memory.shape == (2, 5, D)
    torch.testing.assert_close(model.decode(TGT, memory, SRC), logits)
    assert model.pad_id == PAD


def test_transformer_attention_weights_and_fully_padded_source():
    model = transformer()
    src = SRC.clone()
    src[1] = PAD
    logits, attention = model(src, TGT, return_attention=True)
    assert torch.isfinite(logits).all()
    assert [w.shape for w in attention["encoder"]] == [(2, H, 5, 5)] * 2
    assert [w.shape for w in attention["decoder_self"]] == [(2, H, 4, 4)] * 2
    assert [w.shape for w in attention["decoder_cross"]] == [(2, H, 4, 5)] * 2
    assert torch.all(attention["decoder_cross"][0][1] == 0)  # nothing to attend to in row 1
    torch.testing.assert_close(model(src, TGT), logits)


def test_transformer_bad_input_raises_with_shapes():
    model = transformer()
    with pytest.raises(ValueError, match=r"ids in \[0, vocab_size=11\), got values from 2 to 11"):
        model(torch.tensor([[11, 2]]), TGT[:1])
    with pytest.raises(ValueError, match=r"max_len=12\), got \(1, 13\)"):
        model(torch.ones(1, 13, dtype=torch.long), TGT[:1])
    with pytest.raises(ValueError, match=r"shape \(B, length\), got torch.float32 of shape \(2, 5\)"):
        model(SRC.float(), TGT)
    with pytest.raises(ValueError, match=r"src.shape = \(2, 5\), got \(2, 4, 8\)"):
        model.decode(TGT, model.encode(SRC)[:, :4], SRC)
    with pytest.raises(ValueError, match="d_model=8, num_heads=3"):
        Transformer(V, V, d_model=8, num_heads=3)


def test_gpt_is_causal_and_returns_attention():
    model = gpt()
    idx = torch.randint(0, V, (2, 7))
    logits, weights = model(idx, return_attention=True)
    assert logits.shape == (2, 7, V) and [w.shape for w in weights] == [(2, H, 7, 7)] * 2
    assert torch.all(weights[0].triu(1) == 0)
    changed = idx.clone()
    changed[:, 4:] = (idx[:, 4:] + 1) % V
    again = model(changed)
    torch.testing.assert_close(again[:, :4], logits[:, :4])
    assert not torch.allclose(again[:, 4:], logits[:, 4:])
    with pytest.raises(ValueError, match=r"max_len=10\), got \(2, 11\)"):
        model(torch.zeros(2, 11, dtype=torch.long))
    with pytest.raises(ValueError, match="got values from -1"):
        model(torch.tensor([[-1, 2]]))


def test_gpt_generate_with_cache_gives_the_same_tokens():
    model = gpt()
    prompt = torch.randint(0, V, (3, 4))
    # 12 new tokens: the context outgrows max_len=10, so the cropped path is exercised too.
    cached = model.generate(prompt, 12, temperature=0, use_cache=True)
    uncached = model.generate(prompt, 12, temperature=0, use_cache=False)
    assert cached.shape == (3, 16) and torch.equal(cached[:, :4], prompt)
    assert torch.equal(cached, uncached)
    sampled = [model.generate(prompt, 5, top_k=3, use_cache=c, generator=torch.Generator().manual_seed(1))
               for c in (True, False)]
    assert torch.equal(*sampled)


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_classifier_mean_pools_over_real_tokens_only(positional):
    model = classifier(positional=positional)
    tokens = torch.tensor([[3, 4, 5, PAD, PAD], [PAD] * 5])
    logits = model(tokens)
    assert logits.shape == (2, 3) and torch.isfinite(logits).all()
    change_pad_embedding(model.embedding)
    torch.testing.assert_close(model(tokens)[0], logits[0])
    torch.testing.assert_close(model(tokens[:, :3])[0], logits[0])  # padding does not dilute the mean


def test_classifier_without_positions_ignores_word_order():
    model = classifier(positional=None)
    tokens = torch.tensor([[3, 4, 5, 6, 7, 8]])
    reordered = tokens[:, torch.tensor([5, 2, 0, 1, 4, 3])]
    torch.testing.assert_close(model(reordered), model(tokens))
    positioned = classifier(positional="sinusoidal")
    assert not torch.allclose(positioned(reordered), positioned(tokens))
    logits, weights = model(tokens, return_attention=True)
    assert [w.shape for w in weights] == [(1, H, 6, 6)] * 2
    with pytest.raises(ValueError, match="pooling"):
        classifier(pooling="max")


def test_scaled_embeddings_do_not_drown_the_positions():
    """With scale=True (the paper's sqrt(d_model)) token vectors must stay of the size of the
    sinusoidal encoding: a N(0, 1) table times sqrt(d_model) hid the positions and the
    Transformer could not learn the reverse task."""
    from transformer_lib.models import InputEmbedding

    torch.manual_seed(0)
    d_model = 64
    embedding = InputEmbedding(1000, d_model, max_len=32, positional=None, scale=True)
    tokens = embedding(torch.randint(0, 1000, (8, 32)))
    assert 0.8 < tokens.std().item() < 1.2, f"scaled token vectors have std {tokens.std().item():.2f}, expected about 1"


@pytest.mark.parametrize("config", [None, ModernConfig.llama(), ModernConfig.llama(num_kv_heads=1,
                                                                                   tie_embeddings=False)],
                         ids=["gpt2", "llama", "llama-untied-gqa"])
@pytest.mark.parametrize("num_layers", [1, 4])
def test_a_fresh_gpt_guesses_almost_uniformly(config, num_layers):
    """GPT-2's initialisation: the first loss on random text is within 0.1 nats of ln(V) (PyTorch's N(0, 1)
    embedding, tied to the output layer, started 30-40 nats above it)."""
    torch.manual_seed(0)
    vocab = 165
    gpt = GPT(vocab, d_model=64, num_heads=4, num_layers=num_layers, d_ff=256, max_len=32, config=config)
    ids = torch.randint(vocab, (16, 33))
    with torch.no_grad():
        loss = F.cross_entropy(gpt(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())
    assert abs(loss.item() - math.log(vocab)) < 0.1


def test_gpt_weights_start_as_gpt2s():
    torch.manual_seed(0)
    layers = 3
    gpt = GPT(100, d_model=96, num_heads=4, num_layers=layers, d_ff=384, max_len=64)
    residual = GPT2_INIT_STD / math.sqrt(2 * layers)
    for name, p in gpt.named_parameters():
        if name.endswith(RESIDUAL_PROJECTIONS):
            assert p.std().item() == pytest.approx(residual, rel=0.1), name
        elif name.endswith("bias") and "norm" not in name:
            assert torch.count_nonzero(p) == 0, name
        elif p.dim() == 2:  # every other matrix: linear layers, token and position tables
            assert p.std().item() == pytest.approx(GPT2_INIT_STD, rel=0.1), name
    assert gpt.lm_head.weight is gpt.embedding.token.weight
    assert {n for n, _ in gpt.named_parameters() if n.endswith(RESIDUAL_PROJECTIONS)} == {
        f"blocks.layers.{i}.{part}" for i in range(layers)
        for part in ("self_attention.out_proj.weight", "feed_forward.linear2.weight")}
