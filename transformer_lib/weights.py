"""Loading weights saved in Hugging Face's layouts (chapter 11). Nothing is downloaded here.

A user who has a GPT-2 or a Llama checkpoint (a state dict of tensors, e.g. read with
``torch.load`` or ``safetensors``) can run it with this library:

* ``gpt_from_hf_gpt2(state_dict, num_heads)``: chapter 8's ``GPT`` from a ``GPT2LMHeadModel``'s
  (or ``GPT2Model``'s) state dict. GPT-2 stores its projections as ``Conv1D`` weights,
  ``(in_features, out_features)``, the transpose of ``nn.Linear``'s. Released GPT-2 checkpoints
  use the tanh approximation of GELU (``activation_function="gelu_new"``, the default here).
* ``gpt_from_hf_llama(state_dict, num_heads, num_kv_heads)``: ``GPT(config=ModernConfig.llama())``
  from a ``LlamaForCausalLM``'s state dict; ``llama_layer_state(layer_state)`` maps one decoder
  layer's weights to a ``ModernBlock``'s.

**RoPE layout.** The Llama loaders expect Hugging Face's converted weights, whose RoPE pairs
feature ``i`` with feature ``i + d_head / 2`` of each head ("rotate half", as
``transformer_lib.rope``). Meta's reference code pairs neighbours ``(2i, 2i + 1)``; Hugging
Face's converter reorders the rows of ``W_Q`` and ``W_K`` within each head so that both give the
same scores (``rope_rows_from_interleaved`` does that reordering). Meta's original checkpoints
(names ``tok_embeddings``, ``layers.{i}.attention.wq``...) are refused with an error saying so.

Hugging Face's Llama computes its RMSNorm and its RoPE angles in float32 whatever the input
dtype; ours compute in the input's dtype (the angles in float64).
"""

from __future__ import annotations

import re

import torch
from torch import Tensor

from .models import GPT
from .modern import ModernConfig

__all__ = ["gpt_from_hf_gpt2", "llama_layer_state", "gpt_from_hf_llama", "rope_rows_from_interleaved"]

# GPT-2 names (after "h.{i}.") -> ours (after "blocks.layers.{i}."); True = a Conv1D weight, transposed.
_GPT2_LAYER_NAMES = {
    "ln_1.weight": ("self_attention_residual.norm.weight", False),
    "ln_1.bias": ("self_attention_residual.norm.bias", False),
    "attn.c_attn.weight": ("self_attention.in_proj.weight", True),
    "attn.c_attn.bias": ("self_attention.in_proj.bias", False),
    "attn.c_proj.weight": ("self_attention.out_proj.weight", True),
    "attn.c_proj.bias": ("self_attention.out_proj.bias", False),
    "ln_2.weight": ("feed_forward_residual.norm.weight", False),
    "ln_2.bias": ("feed_forward_residual.norm.bias", False),
    "mlp.c_fc.weight": ("feed_forward.linear1.weight", True),
    "mlp.c_fc.bias": ("feed_forward.linear1.bias", False),
    "mlp.c_proj.weight": ("feed_forward.linear2.weight", True),
    "mlp.c_proj.bias": ("feed_forward.linear2.bias", False),
}


def _require(state_dict: dict[str, Tensor], names: list[str], layout: str) -> None:
    missing = [name for name in names if name not in state_dict]
    if missing:
        raise ValueError(f"not a {layout} state dict: missing {missing[:4]}{' ...' if len(missing) > 4 else ''}")


# Hugging Face's names for GPT-2's activation (config.activation_function) -> ours.
_GPT2_ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu"}


def gpt_from_hf_gpt2(state_dict: dict[str, Tensor], num_heads: int, activation_function: str = "gelu_new") -> GPT:
    """``GPT`` with the weights of a Hugging Face GPT-2 state dict (sizes read from the shapes).

    ``num_heads`` and ``activation_function`` are not in the weights but in the checkpoint's
    config (GPT-2 small: 12 heads, ``"gelu_new"``, the tanh approximation of GELU, with which the
    model is exact; ``"gelu"`` is the exact GELU). The model has the dtype and device of the
    weights; call ``.eval()`` before using it.
    """
    if activation_function not in _GPT2_ACTIVATIONS:
        raise ValueError(f"activation_function must be one of {sorted(_GPT2_ACTIVATIONS)}, "
                         f"got {activation_function!r}")
    sd = {name.removeprefix("transformer."): tensor for name, tensor in state_dict.items()}
    _require(sd, ["wte.weight", "wpe.weight", "ln_f.weight", "h.0.attn.c_attn.weight"], "GPT-2")
    (n_vocab, d_model), max_len = sd["wte.weight"].shape, sd["wpe.weight"].size(0)
    num_layers = 1 + max(int(m.group(1)) for name in sd if (m := re.match(r"h\.(\d+)\.", name)))
    d_ff = sd["h.0.mlp.c_fc.weight"].size(1)
    model = GPT(n_vocab, d_model, num_heads, num_layers, d_ff, max_len,
                activation=_GPT2_ACTIVATIONS[activation_function])
    ours = {
        "embedding.token.weight": sd["wte.weight"],
        "embedding.position.embedding.weight": sd["wpe.weight"],
        "blocks.norm.weight": sd["ln_f.weight"],
        "blocks.norm.bias": sd["ln_f.bias"],
        "lm_head.weight": sd["wte.weight"],
    }
    for i in range(num_layers):
        _require(sd, [f"h.{i}.{name}" for name in _GPT2_LAYER_NAMES], "GPT-2")
        for theirs, (name, transpose) in _GPT2_LAYER_NAMES.items():
            tensor = sd[f"h.{i}.{theirs}"]
            ours[f"blocks.layers.{i}.{name}"] = tensor.t() if transpose else tensor
    model.to(device=sd["wte.weight"].device, dtype=sd["wte.weight"].dtype)
    model.load_state_dict(ours)
    return model


_META_LAYOUT = (
    "this is Meta's original Llama layout (names attention.wq, feed_forward.w1, tok_embeddings...; RoPE "
    "pairs features (2i, 2i + 1)); the loader expects Hugging Face's converted layout (q_proj, gate_proj, "
    "embed_tokens; RoPE pairs i with i + d_head / 2): convert the checkpoint with Hugging Face's "
    "convert_llama_weights_to_hf, or rename it and reorder W_Q and W_K with rope_rows_from_interleaved"
)


def rope_rows_from_interleaved(weight: Tensor, num_heads: int) -> Tensor:
    """Reorder the rows of a ``W_Q`` or ``W_K`` ``(num_heads * d_head, d_model)`` from Meta's RoPE layout.

    Meta's reference Llama rotates the pairs ``(2i, 2i + 1)`` of each head; ``transformer_lib.rope``
    rotates ``(i, i + d_head / 2)``. Within each head, rows ``0, 2, 4, ...`` come first, then rows
    ``1, 3, 5, ...``: pair ``(2i, 2i + 1)`` becomes pair ``(i, i + d_head / 2)``. Queries and keys
    are reordered alike, so every score is unchanged. This is the permutation of Hugging Face's
    Llama converter; ``W_V`` and ``W_O`` are not reordered.
    """
    rows, d_model = weight.shape
    if rows % num_heads != 0 or (rows // num_heads) % 2 != 0:
        raise ValueError(f"weight must have num_heads * d_head rows with d_head even, got {rows} rows "
                         f"for num_heads={num_heads}")
    d_head = rows // num_heads
    return weight.view(num_heads, d_head // 2, 2, d_model).transpose(1, 2).reshape(rows, d_model)


def llama_layer_state(layer_state: dict[str, Tensor]) -> dict[str, Tensor]:
    """One Llama decoder layer's state dict (``self_attn.q_proj.weight``...) -> a ``ModernBlock``'s.

    The query, key and value projections are stacked into ``attention.in_proj``, rows
    ``W_Q, W_K, W_V``, as ``GroupedQueryAttention`` stores them. The rows of ``W_Q`` and ``W_K``
    must be in Hugging Face's RoPE layout (see the module's docstring): they are not reordered.
    """
    if any(name.startswith(("attention.wq", "feed_forward.w1")) for name in layer_state):
        raise ValueError(_META_LAYOUT)
    names = ["self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
             "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
             "input_layernorm.weight", "post_attention_layernorm.weight"]
    _require(layer_state, names, "Llama decoder layer")
    if any(name.endswith(".bias") for name in layer_state):
        raise ValueError("Llama layers have no biases; this state dict has some (attention_bias or mlp_bias)")
    q, k, v = (layer_state[f"self_attn.{p}_proj.weight"] for p in "qkv")
    return {
        "attention_norm.weight": layer_state["input_layernorm.weight"],
        "attention.in_proj.weight": torch.cat([q, k, v]),
        "attention.out_proj.weight": layer_state["self_attn.o_proj.weight"],
        "feed_forward_norm.weight": layer_state["post_attention_layernorm.weight"],
        "feed_forward.gate.weight": layer_state["mlp.gate_proj.weight"],
        "feed_forward.up.weight": layer_state["mlp.up_proj.weight"],
        "feed_forward.down.weight": layer_state["mlp.down_proj.weight"],
    }


def gpt_from_hf_llama(
    state_dict: dict[str, Tensor],
    num_heads: int,
    num_kv_heads: int,
    max_len: int = 2048,
    rope_base: float = 10000.0,
    norm_eps: float = 1e-6,
    rope_scaling: dict | None = None,
) -> GPT:
    """``GPT(config=ModernConfig.llama(...))`` with the weights of a ``LlamaForCausalLM`` state dict.

    ``num_heads``, ``num_kv_heads``, ``rope_base`` (``rope_theta``), ``norm_eps``
    (``rms_norm_eps``) and ``rope_scaling`` come from the checkpoint's config; ``max_len`` only
    bounds the inputs (RoPE has no table). The output layer is tied when the state dict has no
    ``lm_head.weight``. The weights must be in Hugging Face's RoPE layout (see the module's
    docstring); Meta's original layout is refused.

    RoPE scaling (Llama 3.1 and later rescale the low frequencies, ``rope_type="llama3"``) is not
    implemented: any ``rope_scaling`` other than ``None`` or ``{"rope_type": "default"}`` raises,
    since the model would otherwise rotate with the wrong angles. Pass the config's value.
    """
    if rope_scaling is not None and rope_scaling.get("rope_type", rope_scaling.get("type")) != "default":
        raise NotImplementedError(
            f"rope_scaling={rope_scaling!r} is not implemented (only unscaled RoPE is): "
            "the model would rotate queries and keys with the wrong angles"
        )
    sd = {name.removeprefix("model."): tensor for name, tensor in state_dict.items()}
    if "tok_embeddings.weight" in sd or any(".attention.wq." in name for name in sd):
        raise ValueError(_META_LAYOUT)
    _require(sd, ["embed_tokens.weight", "norm.weight", "layers.0.mlp.gate_proj.weight"], "Llama")
    n_vocab, d_model = sd["embed_tokens.weight"].shape
    num_layers = 1 + max(int(m.group(1)) for name in sd if (m := re.match(r"layers\.(\d+)\.", name)))
    d_ff = sd["layers.0.mlp.gate_proj.weight"].size(0)
    tied = "lm_head.weight" not in sd
    config = ModernConfig.llama(num_kv_heads, tie_embeddings=tied, rope_base=rope_base, norm_eps=norm_eps)
    model = GPT(n_vocab, d_model, num_heads, num_layers, d_ff, max_len, config=config)
    ours = {"embedding.token.weight": sd["embed_tokens.weight"], "blocks.norm.weight": sd["norm.weight"],
            "lm_head.weight": sd["embed_tokens.weight"] if tied else sd["lm_head.weight"]}
    for i in range(num_layers):
        prefix = f"layers.{i}."
        layer = {name.removeprefix(prefix): t for name, t in sd.items() if name.startswith(prefix)}
        ours.update({f"blocks.layers.{i}.{name}": t for name, t in llama_layer_state(layer).items()})
    model.to(device=sd["embed_tokens.weight"].device, dtype=sd["embed_tokens.weight"].dtype)
    model.load_state_dict(ours)
    return model
