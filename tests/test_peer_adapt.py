"""Proof against peers for chapter 12, in float64 with random weights (nothing is downloaded).

* LoRA equals ``peft``'s (``LoraConfig``, ``get_peft_model``, ``merge_and_unload``): on a plain torch
  module and on a Hugging Face GPT-2 (whose ``Conv1D`` layers ``peft`` adapts with ``fan_in_fan_out``)
  against our ``GPT`` with the same weights. Their adapters' ``A`` and ``B`` (``B`` set nonzero) are
  copied into ours; outputs and merged weights agree to 1e-12.
* DPO equals ``trl``'s ``DPOTrainer``: its own loss code (``DPOTrainer._compute_loss``, called on a
  trainer made with ``object.__new__`` and given the attributes that method reads; trl 1.x has no
  standalone ``dpo_loss``), on batches made by its own ``DataCollatorForPreference``, with a GPT-2
  policy and a different GPT-2 reference, against our ``preference_batch`` / ``answer_logprobs`` /
  ``dpo_loss`` on our ``GPT`` with the same weights. trl's fused LM head (``add_fused_lm_head``)
  accumulates its softmax in float32, so through it the loss agrees to 1e-6 only; with that head
  replaced by its float64 definition (the log-probability of each next-token label, zero where the
  label is -100, as ``FusedCausalLMOutput`` documents), everything else being trl's code (labels from
  the completion mask, the sum over tokens, the chosen/rejected split, the sigmoid loss, the rewards),
  the loss, the rewards and every parameter's gradient agree to 1e-12.

``peft`` and ``trl`` are test-only dependencies, the ``peer`` extra of pyproject.toml.
"""

import copy
from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch
from peft import LoraConfig, get_peft_model
from torch import nn
from transformers import GPT2Config, GPT2LMHeadModel
from trl.trainer.dpo_trainer import DataCollatorForPreference, DPOTrainer
from trl.trainer.utils import FusedCausalLMOutput, add_fused_lm_head

from transformer_lib.dpo import answer_logprobs, dpo_loss, preference_batch
from transformer_lib.lora import LoRALinear, add_lora, merge_lora
from transformer_lib.weights import gpt_from_hf_gpt2

# trl reads transformers' is_gradient_checkpointing, which transformers 5 deprecates
pytestmark = pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
F64 = torch.float64
D, H, V, R, ALPHA = 16, 2, 23, 3, 5.0


def hf_gpt2(seed=0):
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=V, n_positions=16, n_embd=D, n_layer=2, n_head=H, activation_function="gelu",
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    config._attn_implementation = "sdpa"
    model = GPT2LMHeadModel(config).to(F64).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.3)
    return model


def peft_lora(model, targets):
    """``model`` with ``peft``'s LoRA on ``targets``, each ``B`` set to random values (it starts at zero)."""
    theirs = get_peft_model(model, LoraConfig(r=R, lora_alpha=ALPHA, target_modules=targets, lora_dropout=0.0))
    with torch.no_grad():
        for m in theirs.modules():
            if hasattr(m, "lora_B") and "default" in m.lora_B:
                m.lora_B["default"].weight.normal_(0, 0.5)
    return theirs


def copy_adapters(theirs, ours, name_map=lambda name: name):
    """Copy ``peft``'s ``A`` and ``B`` into our ``LoRALinear`` of the mapped name; returns how many."""
    ours_modules = dict(ours.named_modules())
    copied = 0
    for name, m in theirs.base_model.model.named_modules():
        if hasattr(m, "lora_A") and "default" in m.lora_A:
            lora = ours_modules[name_map(name)]
            assert isinstance(lora, LoRALinear) and lora.scaling == m.scaling["default"] == ALPHA / R
            with torch.no_grad():
                lora.lora_A.copy_(m.lora_A["default"].weight)
                lora.lora_B.copy_(m.lora_B["default"].weight)
            copied += 1
    return copied


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 10), nn.Linear(10, 4)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def test_lora_equals_peft_on_a_torch_module():
    torch.manual_seed(0)
    base = TwoLayers().to(F64)
    ours = copy.deepcopy(base)
    n = add_lora(ours, target_names=["fc1", "fc2"], r=R, alpha=ALPHA)
    theirs = peft_lora(copy.deepcopy(base), ["fc1", "fc2"])
    assert n == sum(p.numel() for p in theirs.parameters() if p.requires_grad) == R * (6 + 10) + R * (10 + 4)
    for name in ("fc1", "fc2"):  # both initialise A as nn.Linear does: uniform in +-1/sqrt(in)
        bound = 1 / getattr(base, name).in_features ** 0.5
        assert getattr(ours, name).lora_A.abs().max() <= bound
        assert getattr(theirs.base_model.model, name).lora_A["default"].weight.abs().max() <= bound
    assert copy_adapters(theirs, ours) == 2
    x = torch.randn(5, 7, 6, dtype=F64)
    with torch.no_grad():
        assert torch.allclose(ours(x), theirs(x), atol=1e-12, rtol=0)
        assert (ours(x) - base(x)).abs().max() > 1e-2  # B is nonzero: the adapters act
        merged_theirs = theirs.merge_and_unload()
        merge_lora(ours)
        for name, tensor in merged_theirs.state_dict().items():
            assert torch.allclose(ours.state_dict()[name], tensor, atol=1e-12, rtol=0), name
        assert torch.allclose(ours(x), merged_theirs(x), atol=1e-12, rtol=0)


# GPT-2's layer names -> ours (transformer_lib.weights maps the same weights)
GPT2_TO_OURS = {"attn.c_attn": "self_attention.in_proj", "attn.c_proj": "self_attention.out_proj",
                "mlp.c_fc": "feed_forward.linear1", "mlp.c_proj": "feed_forward.linear2"}


def ours_name(gpt2_name):
    """``transformer.h.1.attn.c_attn`` -> ``blocks.layers.1.self_attention.in_proj``."""
    layer, rest = gpt2_name.removeprefix("transformer.h.").split(".", 1)
    return f"blocks.layers.{layer}.{GPT2_TO_OURS[rest]}"


def test_lora_equals_peft_on_gpt2():
    hf = hf_gpt2()
    ours = gpt_from_hf_gpt2(hf.state_dict(), num_heads=H, activation_function="gelu").eval()
    add_lora(ours, target_names=list(GPT2_TO_OURS.values()), r=R, alpha=ALPHA)
    with pytest.warns(UserWarning, match="fan_in_fan_out"):  # peft adapts GPT-2's Conv1D (weights transposed)
        theirs = peft_lora(copy.deepcopy(hf), ["c_attn", "c_proj", "c_fc"]).eval()
    assert copy_adapters(theirs, ours, ours_name) == 2 * 4
    idx = torch.randint(0, V, (3, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.allclose(ours(idx), theirs(input_ids=idx).logits, atol=1e-12, rtol=0)
        assert (ours(idx) - hf(idx).logits).abs().max() > 1e-2
        merged_theirs = theirs.merge_and_unload()
        merge_lora(ours)
        expected = gpt_from_hf_gpt2(merged_theirs.state_dict(), num_heads=H, activation_function="gelu")
        for name, tensor in expected.state_dict().items():
            assert torch.allclose(ours.state_dict()[name], tensor, atol=1e-12, rtol=0), name


# --- DPO against trl ---

PROMPTS = [[5, 6, 7], [8], [9, 10, 11, 12]]
CHOSEN = [[13, 14], [15, 16, 17, 18], [19]]
REJECTED = [[20], [21, 22], [3, 4, 5, 6]]
BETA = 0.3


class Accelerator:
    """What ``DPOTrainer._compute_loss`` asks of accelerate's ``Accelerator`` in one process."""

    device = torch.device("cpu")

    def gather(self, x):
        return x

    gather_for_metrics = gather

    def unwrap_model(self, model):
        return model


def trl_dpo(policy, reference, model=None):
    """trl's DPO loss and metrics for the batch of PROMPTS/CHOSEN/REJECTED, through ``model`` (default: ``policy``)."""
    trainer = object.__new__(DPOTrainer)
    trainer.__dict__.update(
        model=policy, ref_model=reference, accelerator=Accelerator(), beta=BETA, loss_types=["sigmoid"],
        loss_weights=[1.0], f_divergence_type="reverse_kl", ld_alpha=None, precompute_ref_logps=False,
        use_weighting=False, aux_loss_enabled=False, args=SimpleNamespace(gradient_checkpointing_kwargs=None),
        _metrics={"train": defaultdict(list), "eval": defaultdict(list)}, _total_train_tokens=0, _tp_size=1)
    examples = [{"prompt_ids": p, "chosen_ids": c, "rejected_ids": r} for p, c, r in zip(PROMPTS, CHOSEN, REJECTED)]
    inputs = DataCollatorForPreference(pad_token_id=0)(examples)
    loss = trainer._compute_loss(model or policy, inputs, return_outputs=False)
    return loss, {name: values[-1] for name, values in trainer._metrics["eval"].items()}


class UnfusedHead(nn.Module):
    """A GPT-2 whose ``fused_lm_head=True`` call returns what trl's fused head defines, computed in float64
    from the full logits: each next-token label's log-probability (zero where the label is -100), and the
    logged metrics' entropy, mean logit and top-1 flag."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, labels, fused_lm_head, use_cache=False):
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]
        labels = labels[:, 1:]
        mask = labels != -100
        logp = logits.log_softmax(-1)
        log_probs = logp.gather(-1, labels.clamp(min=0)[..., None])[..., 0] * mask
        return FusedCausalLMOutput(log_probs=log_probs, entropy=-(logp.exp() * logp).sum(-1) * mask,
                                   mean_logits=logits.mean(-1) * mask, label_mask=mask,
                                   is_top1=(logits.argmax(-1) == labels) & mask)


def ours_dpo(policy, reference):
    batch = preference_batch(PROMPTS, CHOSEN, REJECTED, pad_id=0)
    policy_chosen, policy_rejected = answer_logprobs(policy, batch)
    with torch.no_grad():
        reference_chosen, reference_rejected = answer_logprobs(reference, batch)
    return dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected, BETA)


def gpt2_pair():
    """A GPT-2 policy and a different GPT-2 reference, and ours with their weights."""
    policy, reference = hf_gpt2(0), hf_gpt2(1)
    ours = [gpt_from_hf_gpt2(m.state_dict(), num_heads=H, activation_function="gelu").eval()
            for m in (policy, reference)]
    return policy, reference, *ours


def test_dpo_loss_rewards_and_gradients_equal_trls():
    policy, reference, ours_policy, ours_reference = gpt2_pair()
    theirs, metrics = trl_dpo(policy, UnfusedHead(reference), model=UnfusedHead(policy))
    out = ours_dpo(ours_policy, ours_reference)
    assert abs(out.loss.item() - theirs.item()) < 1e-12
    assert abs(out.chosen_rewards.mean().item() - metrics["rewards/chosen"]) < 1e-12
    assert abs(out.rejected_rewards.mean().item() - metrics["rewards/rejected"]) < 1e-12
    assert abs(out.margin - metrics["rewards/margins"]) < 1e-12
    assert abs(out.accuracy - metrics["rewards/accuracies"]) < 1e-7 and 0 < out.accuracy < 1  # float32 means
    theirs.backward()
    out.loss.backward()
    grads = {name: p.grad for name, p in policy.named_parameters()}  # GPT-2's layout -> ours, as the weights
    expected = gpt_from_hf_gpt2(grads, num_heads=H, activation_function="gelu").state_dict()
    for name, p in ours_policy.named_parameters():
        assert torch.allclose(p.grad, expected[name], atol=1e-12, rtol=0), name


def test_dpo_loss_equals_trls_through_its_fused_float32_head():
    policy, reference, ours_policy, ours_reference = gpt2_pair()
    add_fused_lm_head(policy, outputs=("log_probs", "entropy", "mean_logits", "is_top1"))
    add_fused_lm_head(reference)
    theirs, _ = trl_dpo(policy, reference)
    with torch.no_grad():
        out = ours_dpo(ours_policy, ours_reference)
    assert abs(out.loss.item() - theirs.item()) < 1e-6  # float32 accumulation in trl's head
