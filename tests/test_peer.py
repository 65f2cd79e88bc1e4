"""Proof against a peer: our GPT and modern block equal Hugging Face ``transformers``' in float64.

The peer models are built from configs with random weights (nothing is downloaded). ``transformers``
is a test-only dependency, the ``peer`` extra of pyproject.toml, which ``make test`` installs.
"""

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache
from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

from transformer_lib.attention import causal_mask
from transformer_lib.modern import ModernBlock, ModernConfig
from transformer_lib.multihead import KVCache
from transformer_lib.rope import rotary_cos_sin
from transformer_lib.weights import gpt_from_hf_gpt2, gpt_from_hf_llama, llama_layer_state

F64 = torch.float64
D, H, H_KV, D_FF, V = 32, 4, 2, 48, 50


def hf_gpt2(activation="gelu"):
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=V, n_positions=24, n_embd=D, n_layer=2, n_head=H, activation_function=activation,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    config._attn_implementation = "sdpa"
    return GPT2LMHeadModel(config).to(F64).eval()


def llama_config(num_kv_heads=H_KV):
    config = LlamaConfig(vocab_size=V, hidden_size=D, intermediate_size=D_FF, num_hidden_layers=2,
                         num_attention_heads=H, num_key_value_heads=num_kv_heads, max_position_embeddings=64,
                         rms_norm_eps=1e-6, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    config._attn_implementation = "sdpa"  # the eager path takes its softmax in float32
    return config


def randomise(module):
    """Random weights everywhere, the norms' gains included (they start at 1)."""
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0, 0.3)
    return module


@pytest.mark.parametrize("activation", ["gelu", "gelu_new"])
def test_gpt_equals_gpt2lmheadmodel(activation):
    theirs = randomise(hf_gpt2(activation))
    ours = gpt_from_hf_gpt2(theirs.state_dict(), num_heads=H, activation_function=activation).eval()
    idx = torch.randint(0, V, (3, 24), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.allclose(ours(idx), theirs(idx).logits, atol=1e-12, rtol=0)


def test_gpt_with_kv_cache_equals_gpt2_with_past_key_values():
    theirs = randomise(hf_gpt2())
    ours = gpt_from_hf_gpt2(theirs.state_dict(), num_heads=H, activation_function="gelu").eval()
    idx = torch.randint(0, V, (2, 5), generator=torch.Generator().manual_seed(2))
    caches = [KVCache() for _ in ours.blocks.layers]
    with torch.no_grad():
        out = theirs(idx, use_cache=True)
        logits, past = out.logits[:, -1], out.past_key_values
        ours_logits = ours._logits(idx, caches)[:, -1]
        for _ in range(8):
            assert torch.allclose(ours_logits, logits, atol=1e-12, rtol=0)
            token = logits.argmax(-1, keepdim=True)
            out = theirs(token, past_key_values=past, use_cache=True)
            logits, past = out.logits[:, -1], out.past_key_values
            ours_logits = ours._logits(token, caches)[:, -1]
            idx = torch.cat([idx, token], 1)
    assert torch.equal(ours.generate(idx[:, :5], 8, temperature=0), idx)


def test_gpt2_loaded_with_the_other_gelu_differs():
    theirs = randomise(hf_gpt2("gelu_new"))  # released GPT-2 checkpoints: the tanh approximation, our default
    ours = gpt_from_hf_gpt2(theirs.state_dict(), num_heads=H, activation_function="gelu").eval()
    idx = torch.randint(0, V, (2, 12), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        gap = (ours(idx) - theirs(idx).logits).abs().max().item()
    assert 1e-12 < gap < 1e-2  # the approximation: same layout, slightly different GELU
    with pytest.raises(ValueError, match="activation_function must be one of"):
        gpt_from_hf_gpt2(theirs.state_dict(), num_heads=H, activation_function="relu")


def llama_layer_pair(num_kv_heads, exact_norms):
    """A random Llama decoder layer and our ModernBlock with its weights."""
    torch.manual_seed(0)
    config = llama_config(num_kv_heads)
    theirs = randomise(LlamaDecoderLayer(config, layer_idx=0).to(F64).eval())
    if exact_norms:  # Hugging Face's RMSNorm computes in float32; torch's (equal to ours) in the input's dtype
        for name in ("input_layernorm", "post_attention_layernorm"):
            norm = torch.nn.RMSNorm(D, eps=1e-6, dtype=F64)
            norm.weight.data.copy_(getattr(theirs, name).weight)
            setattr(theirs, name, norm)
    ours = ModernBlock(D, H, D_FF, config=ModernConfig.llama(num_kv_heads, norm_eps=1e-6)).to(F64).eval()
    ours.load_state_dict(llama_layer_state(theirs.state_dict()))
    return config, theirs, ours


def run_llama_layer(layer, x, start, cache):
    T = x.size(1)
    cos, sin = rotary_cos_sin(torch.arange(start, start + T), D // H)
    mask = causal_mask(start + T)[start:][None, None]  # (1, 1, T, S), True = may attend
    return layer(x, attention_mask=mask, position_ids=torch.arange(start, start + T)[None],
                 past_key_values=cache, use_cache=cache is not None, position_embeddings=(cos[None], sin[None]))


@pytest.mark.parametrize("num_kv_heads", [H, H_KV, 1])
@pytest.mark.parametrize("exact_norms", [True, False])
def test_modern_block_equals_llama_decoder_layer(num_kv_heads, exact_norms):
    config, theirs, ours = llama_layer_pair(num_kv_heads, exact_norms)
    x = torch.randn(3, 11, D, dtype=F64)
    with torch.no_grad():
        gap = (ours(x, is_causal=True) - run_llama_layer(theirs, x, 0, None)).abs().max().item()
    assert gap < (1e-12 if exact_norms else 1e-5)  # float32 norms: float32 rounding


@pytest.mark.parametrize("num_kv_heads", [H, H_KV, 1])
def test_modern_block_with_kv_cache_equals_llama_layer_with_dynamic_cache(num_kv_heads):
    config, theirs, ours = llama_layer_pair(num_kv_heads, exact_norms=True)
    x = torch.randn(2, 9, D, dtype=F64)
    their_cache, our_cache = DynamicCache(config=config), KVCache()
    with torch.no_grad():
        for start, stop in ((0, 5), (5, 6), (6, 7), (7, 9)):
            chunk = x[:, start:stop]
            mask = None if start == 0 else causal_mask(stop)[start:]
            ours_out = ours(chunk, mask, is_causal=start == 0, cache=our_cache)
            assert torch.allclose(ours_out, run_llama_layer(theirs, chunk, start, their_cache), atol=1e-12, rtol=0)
    assert our_cache.key.shape == (2, num_kv_heads, 9, D // H)
    assert torch.allclose(our_cache.key, their_cache.layers[0].keys, atol=1e-12)


def test_rope_angles_equal_llamas():
    config = llama_config()
    theirs = LlamaRotaryEmbedding(config)
    positions = torch.arange(40)
    cos, sin = theirs(torch.zeros(1, 40, D, dtype=F64), positions[None])
    ours_cos, ours_sin = rotary_cos_sin(positions, D // H)
    # theirs are float32
    assert torch.allclose(cos[0], ours_cos, atol=1e-5) and torch.allclose(sin[0], ours_sin, atol=1e-5)


def test_llama_for_causal_lm_loads_into_gpt_with_llama_config():
    torch.manual_seed(0)
    config = llama_config()
    theirs = randomise(LlamaForCausalLM(config).to(F64).eval())
    ours = gpt_from_hf_llama(theirs.state_dict(), num_heads=H, num_kv_heads=H_KV, max_len=64).eval()
    assert ours.lm_head.weight is not ours.embedding.token.weight
    idx = torch.randint(0, V, (2, 16), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        gap = (ours(idx) - theirs(idx).logits).abs().max().item()
    assert gap < 1e-4  # their RMSNorm and RoPE angles are float32
    assert torch.equal(ours.generate(idx, 6, temperature=0), ours.generate(idx, 6, temperature=0, use_cache=False))


def test_loaders_reject_other_layouts():
    with pytest.raises(ValueError, match="not a GPT-2 state dict"):
        gpt_from_hf_gpt2({"embed_tokens.weight": torch.zeros(3, 4)}, num_heads=2)
    with pytest.raises(ValueError, match="not a Llama decoder layer"):
        llama_layer_state({"ln_1.weight": torch.zeros(4)})
    meta = {"tok_embeddings.weight": torch.zeros(V, D), "layers.0.attention.wq.weight": torch.zeros(D, D)}
    with pytest.raises(ValueError, match=r"Meta's original Llama layout.*rope_rows_from_interleaved"):
        gpt_from_hf_llama(meta, num_heads=H, num_kv_heads=H_KV)
    with pytest.raises(ValueError, match="Meta's original Llama layout"):
        llama_layer_state({"attention.wq.weight": torch.zeros(D, D)})


def test_llama_loader_refuses_rope_scaling():
    theirs = randomise(LlamaForCausalLM(llama_config()).to(F64))
    llama31 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 8192}
    with pytest.raises(NotImplementedError, match="rope_scaling=.*llama3.*not implemented"):
        gpt_from_hf_llama(theirs.state_dict(), num_heads=H, num_kv_heads=H_KV, rope_scaling=llama31)
    unscaled = gpt_from_hf_llama(theirs.state_dict(), num_heads=H, num_kv_heads=H_KV,
                                 rope_scaling={"rope_type": "default"})
    assert unscaled.lm_head.weight.shape == (V, D)
