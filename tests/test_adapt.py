"""Tests for chapter 12's adaptation modules: finetune (classification head on a GPT), lora, sft, dpo.

Hand-computed cases are written out as tensors; gradients are checked with ``torch.autograd.gradcheck``
in float64. The comparisons with ``peft`` and ``trl`` are in test_peer_adapt.py.
"""

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from transformer_lib.dpo import DPOObjective, answer_logprobs, dpo_loss, preference_batch, sequence_logprobs
from transformer_lib.finetune import GPTClassifier, count_trainable, last_token_index
from transformer_lib.lora import LoRALinear, add_lora, merge_lora
from transformer_lib.models import GPT
from transformer_lib.modern import ModernConfig
from transformer_lib.sft import IGNORE_INDEX, sft_batch, sft_example, sft_loss

V, D, H, PAD = 13, 8, 2, 0
F64 = torch.float64
X = IGNORE_INDEX


def gpt(config=None):
    torch.manual_seed(0)
    return GPT(V, D, H, num_layers=2, d_ff=16, max_len=12, config=config).to(F64).eval()


def lora_model(r=2, alpha=4.0, nonzero_b=True):
    model = gpt()
    add_lora(model, r=r, alpha=alpha)
    if nonzero_b:
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, LoRALinear):
                    m.lora_B.normal_(0, 0.5)
    return model


IDX = torch.tensor([[3, 4, 5, 6, 7], [8, 9, 2, PAD, PAD]])


# --- GPT.hidden and the classification head (finetune.py) ---

@pytest.mark.parametrize("config", [None, ModernConfig.llama(1)])
def test_gpt_hidden_is_what_lm_head_reads(config):
    model = gpt(config)
    assert model.hidden(IDX).shape == (2, 5, D)
    assert torch.equal(model.lm_head(model.hidden(IDX)), model(IDX))


def test_last_token_index_and_its_errors():
    assert last_token_index(IDX, PAD).tolist() == [4, 2]
    with pytest.raises(ValueError, match=r"rows \[1\] hold only padding"):
        last_token_index(torch.tensor([[3, 4], [PAD, PAD]]), PAD)
    with pytest.raises(ValueError, match="expected right-padded rows.*left padding"):
        last_token_index(torch.tensor([[PAD, 4, 5]]), PAD)
    with pytest.raises(ValueError, match=r"shape \(B, T\), got \(5,\)"):
        last_token_index(torch.tensor([3, 4, 5, 6, 7]), PAD)


@pytest.mark.parametrize("pooling", ["last", "mean"])
def test_classifier_reads_the_real_tokens_only(pooling):
    body = gpt()
    model = GPTClassifier(body, num_classes=3, pad_id=PAD, pooling=pooling).to(F64)
    logits = model(IDX)
    assert logits.shape == (2, 3)
    alone = model(IDX[1:, :3])  # row 1 unpadded: padding after the real tokens changes nothing
    assert torch.allclose(logits[1:], alone, atol=1e-12)
    h = body.hidden(IDX[1:, :3])[0]
    pooled = h[-1] if pooling == "last" else h.mean(0)
    assert torch.allclose(alone[0], model.head(pooled), atol=1e-12)


def test_linear_probe_trains_the_head_only_and_full_fine_tuning_everything():
    probe = GPTClassifier(gpt(), num_classes=3, freeze_body=True)
    assert count_trainable(probe) == D * 3 + 3
    F.cross_entropy(probe(IDX), torch.tensor([0, 2])).backward()
    assert all(p.grad is None for p in probe.body.parameters()) and probe.head.weight.grad is not None
    full = GPTClassifier(gpt(), num_classes=3)
    assert count_trainable(full) == count_trainable(gpt()) + D * 3 + 3


def test_classifier_rejects_bad_arguments():
    with pytest.raises(TypeError, match="body must be a transformer_lib GPT, got Linear"):
        GPTClassifier(nn.Linear(2, 2), 3)
    with pytest.raises(ValueError, match='pooling must be "last" or "mean", got \'max\''):
        GPTClassifier(gpt(), 3, pooling="max")
    with pytest.raises(ValueError, match="num_classes must be >= 2, got 1"):
        GPTClassifier(gpt(), 1)


# --- LoRA (lora.py) ---

def test_lora_linear_starts_equal_to_its_base_and_has_the_papers_shapes():
    torch.manual_seed(0)
    base = nn.Linear(6, 5).to(F64)
    lora = LoRALinear(copy.deepcopy(base), r=3, alpha=6.0)
    assert lora.lora_A.shape == (3, 6) and lora.lora_B.shape == (5, 3) and lora.scaling == 2.0
    assert torch.equal(lora.lora_B, torch.zeros(5, 3, dtype=F64))
    assert lora.lora_A.abs().max() <= 1 / math.sqrt(6)  # Kaiming-uniform, a = sqrt(5): bound 1 / sqrt(in)
    x = torch.randn(4, 7, 6, dtype=F64)
    assert torch.equal(lora(x), base(x))
    assert [name for name, p in lora.named_parameters() if p.requires_grad] == ["lora_A", "lora_B"]


def test_lora_forward_is_the_papers_formula_and_weight_the_effective_one():
    torch.manual_seed(0)
    lora = LoRALinear(nn.Linear(6, 5).to(F64), r=2, alpha=3.0)
    with torch.no_grad():
        lora.lora_B.normal_()
    x = torch.randn(4, 6, dtype=F64)
    W, A, B = lora.base.weight, lora.lora_A, lora.lora_B
    expected = x @ W.T + lora.base.bias + 1.5 * (x @ A.T @ B.T)
    assert torch.allclose(lora(x), expected, atol=1e-12)
    assert torch.allclose(F.linear(x, lora.weight, lora.bias), expected, atol=1e-12)


def test_merge_unmerge_round_trip():
    model = lora_model()
    before = copy.deepcopy(model.state_dict())
    out = model(IDX)
    for m in model.modules():
        if isinstance(m, LoRALinear):
            m.merge()
            m.merge()  # a second merge does nothing
            assert m.merged
    assert torch.allclose(model(IDX), out, atol=1e-12)
    for m in model.modules():
        if isinstance(m, LoRALinear):
            m.unmerge()
    after = model.state_dict()
    assert all(torch.allclose(after[k], before[k], atol=1e-14) for k in before)
    assert torch.allclose(model(IDX), out, atol=1e-12)


def test_merge_lora_unwraps_and_keeps_the_output():
    model = lora_model()
    out = model(IDX)
    merge_lora(model)
    assert not any(isinstance(m, LoRALinear) for m in model.modules())
    assert isinstance(model.blocks.layers[0].self_attention.in_proj, nn.Linear)
    assert torch.allclose(model(IDX), out, atol=1e-12)
    with pytest.raises(ValueError, match="no LoRALinear to merge"):
        merge_lora(model)


def test_add_lora_starts_at_the_base_model_and_trains_only_the_adapters():
    base = gpt()
    model = gpt()
    n = add_lora(model, r=2, alpha=4.0)
    assert torch.equal(model(IDX), base(IDX))  # B = 0
    trainable = [name for name, p in model.named_parameters() if p.requires_grad]
    assert trainable and all(name.endswith(("lora_A", "lora_B")) for name in trainable)
    # per layer: in_proj (D -> 3D) and out_proj (D -> D), r (in + out) each
    assert n == count_trainable(model) == 2 * (2 * (D + 3 * D) + 2 * (D + D))
    model(IDX).sum().backward()
    assert all(p.grad is None for name, p in model.named_parameters() if "lora_" not in name)


def test_add_lora_with_a_head_that_keeps_learning():
    model = GPTClassifier(gpt(), num_classes=3).to(F64)
    n = add_lora(model, target_names=["linear1", "linear2"], r=1, train_also=["head"])
    assert n == 2 * ((D + 16) + (16 + D)) + D * 3 + 3
    assert model.head.weight.requires_grad and not model.body.embedding.token.weight.requires_grad


def test_add_lora_and_lora_linear_reject_bad_input():
    with pytest.raises(ValueError, match=r"rank r must be a positive int, got 0"):
        LoRALinear(nn.Linear(3, 3), r=0)
    with pytest.raises(ValueError, match=r"alpha must be > 0, got -1"):
        LoRALinear(nn.Linear(3, 3), r=2, alpha=-1)
    with pytest.raises(TypeError, match="wraps an nn.Linear, got Conv1d"):
        LoRALinear(nn.Conv1d(3, 3, 1))
    with pytest.raises(ValueError, match=r"in_features=3\), got \(2, 4\)"):
        LoRALinear(nn.Linear(3, 3))(torch.zeros(2, 4))
    model = gpt()
    with pytest.raises(ValueError, match=r"no nn.Linear of the model matches target_names=\['q_proj'\]; its linear "
                                         r"layers are \['blocks.layers.0.feed_forward.linear1'"):
        add_lora(model, target_names=["q_proj"])
    with pytest.raises(ValueError, match=r"\['lm_head'\] are tied"):
        add_lora(model, target_names=["lm_head"])
    with pytest.raises(ValueError, match=r"no submodule of the model matches train_also=\['classifier'\]"):
        add_lora(model, train_also=["classifier"])
    with pytest.raises(TypeError, match="sequence of names, got the string 'in_proj'"):
        add_lora(model, target_names="in_proj")
    assert count_trainable(model) == count_trainable(gpt())  # the refused calls changed nothing


def test_lora_gradcheck():
    torch.manual_seed(0)
    lora = LoRALinear(nn.Linear(4, 3).to(F64), r=2, alpha=2.0)
    x = torch.randn(5, 4, dtype=F64, requires_grad=True)
    A = torch.randn(2, 4, dtype=F64, requires_grad=True)
    B = torch.randn(3, 2, dtype=F64, requires_grad=True)

    def f(x, A, B):
        return torch.func.functional_call(lora, {"lora_A": A, "lora_B": B}, (x,))

    assert torch.autograd.gradcheck(f, (x, A, B))


# --- SFT (sft.py) ---

def test_sft_example_masks_the_prompt():
    assert sft_example([5, 6, 7], [8, 9]) == ([5, 6, 7, 8], [X, X, 8, 9])
    assert sft_example([5, 6, 7], [8, 9], answer_only=False) == ([5, 6, 7, 8], [6, 7, 8, 9])
    assert sft_example([5], [8]) == ([5], [8])


def test_sft_batch_by_hand():
    batch = sft_batch([[5, 6, 7], [4]], [[8, 9], [10, 11, 12]], pad_id=PAD)
    assert torch.equal(batch["idx"], torch.tensor([[5, 6, 7, 8], [4, 10, 11, PAD]]))
    assert torch.equal(batch["targets"], torch.tensor([[X, X, 8, 9], [10, 11, 12, X]]))
    everything = sft_batch([[5, 6, 7], [4]], [[8, 9], [10, 11, 12]], pad_id=PAD, answer_only=False)
    assert torch.equal(everything["targets"], torch.tensor([[6, 7, 8, 9], [10, 11, 12, X]]))


def test_sft_loss_by_hand():
    logits = torch.tensor([[[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [0.0, math.log(3), 0.0]]], dtype=F64)  # (1, 3, 3)
    targets = torch.tensor([[X, 2, 1]])
    # position 1: -log softmax(1, 2, 3)[2]; position 2: -log(3 / 5); position 0 ignored
    expected = (-math.log(math.exp(3) / (math.exp(1) + math.exp(2) + math.exp(3))) - math.log(3 / 5)) / 2
    assert sft_loss(logits, targets).item() == pytest.approx(expected, abs=1e-12)
    logits.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda z: sft_loss(z, targets), (logits,))


def test_sft_rejects_bad_input():
    with pytest.raises(ValueError, match="prompt must hold at least one token.*got an empty prompt"):
        sft_example([], [1])
    with pytest.raises(ValueError, match="answer must hold at least one token, got an empty answer"):
        sft_example([1], [])
    with pytest.raises(ValueError, match="must pair up: got 2 prompts and 1 answers"):
        sft_batch([[1], [2]], [[3]])
    with pytest.raises(ValueError, match=r"got logits \(2, 3, 5\) and targets \(2, 4\)"):
        sft_loss(torch.zeros(2, 3, 5), torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="every target is IGNORE_INDEX"):
        sft_loss(torch.zeros(1, 2, 5), torch.full((1, 2), X))


def test_sft_loss_equals_lm_objective_on_the_same_batch():
    from transformer_lib.objectives import LMObjective

    model = gpt().float()
    batch = sft_batch([[5, 6, 7], [4]], [[8, 9], [10, 11, 12]])
    assert sft_loss(model(batch["idx"]), batch["targets"]).item() == pytest.approx(
        LMObjective().loss(model, batch).item(), abs=1e-6)


# --- DPO (dpo.py) ---

def test_dpo_loss_by_hand():
    # log-ratios: chosen 1.0 - 0.5 = 0.5, rejected -1.0 - (-2.0) = 1.0; beta (0.5 - 1.0) = -0.05
    out = dpo_loss(torch.tensor([1.0], dtype=F64), torch.tensor([-1.0], dtype=F64),
                   torch.tensor([0.5], dtype=F64), torch.tensor([-2.0], dtype=F64), beta=0.1)
    assert out.loss.item() == pytest.approx(math.log(1 + math.exp(0.05)), abs=1e-15)
    assert out.chosen_rewards.item() == pytest.approx(0.05) and out.rejected_rewards.item() == pytest.approx(0.1)
    assert out.accuracy == 0.0 and out.margin == pytest.approx(-0.05)
    # a batch of two: the mean; at equal policy and reference the loss is log 2
    same = torch.tensor([-3.0, -4.0], dtype=F64)
    assert dpo_loss(same, same - 1, same, same - 1).loss.item() == pytest.approx(math.log(2), abs=1e-15)


def test_dpo_loss_gradcheck_and_gradient_formula():
    logps = [torch.randn(3, dtype=F64, generator=torch.Generator().manual_seed(i), requires_grad=True)
             for i in range(4)]
    assert torch.autograd.gradcheck(lambda *t: dpo_loss(*t, beta=0.7).loss, logps)
    # d loss / d policy_chosen = -beta sigmoid(-beta * margin) / B  (the paper's section 4 gradient)
    out = dpo_loss(*logps, beta=0.7)
    out.loss.backward()
    margin = (logps[0] - logps[2]) - (logps[1] - logps[3])
    assert torch.allclose(logps[0].grad, -0.7 * torch.sigmoid(-0.7 * margin.detach()) / 3, atol=1e-15)


def test_sequence_logprobs_sums_the_answer_tokens_only():
    logits = torch.randn(2, 4, V, dtype=F64, generator=torch.Generator().manual_seed(0))
    targets = torch.tensor([[X, X, 8, 9], [10, 11, 12, X]])
    logp = logits.log_softmax(-1)
    expected = torch.stack([logp[0, 2, 8] + logp[0, 3, 9], logp[1, 0, 10] + logp[1, 1, 11] + logp[1, 2, 12]])
    assert torch.allclose(sequence_logprobs(logits, targets), expected, atol=1e-14)


def test_preference_batch_and_answer_logprobs():
    batch = preference_batch([[5, 6], [4]], [[8], [10, 11]], [[9, 9, 9], [12]])
    assert torch.equal(batch["idx"], torch.tensor([[5, 6, 0, 0], [4, 10, 0, 0], [5, 6, 9, 9], [4, 0, 0, 0]]))
    assert torch.equal(batch["targets"], torch.tensor([[X, 8, X, X], [10, 11, X, X], [X, 9, 9, 9], [12, X, X, X]]))
    model = gpt()
    chosen, rejected = answer_logprobs(model, batch)
    alone = sequence_logprobs(model(torch.tensor([[4, 10]])), torch.tensor([[10, 11]]))
    assert chosen.shape == rejected.shape == (2,) and torch.allclose(chosen[1], alone[0], atol=1e-12)
    with pytest.raises(ValueError, match="got 2 prompts, 1 chosen and 2 rejected"):
        preference_batch([[5], [4]], [[8]], [[9], [9]])


def test_dpo_rejects_bad_input():
    t = torch.zeros(3)
    with pytest.raises(ValueError, match="beta must be > 0, got 0"):
        dpo_loss(t, t, t, t, beta=0)
    with pytest.raises(ValueError, match=r"same shape \(B,\), got .*'reference_rejected': \(2,\)"):
        dpo_loss(t, t, t, torch.zeros(2))


def test_dpo_objective_starts_at_log_2_and_its_gradient_moves_the_policy():
    model = gpt()
    objective = DPOObjective(copy.deepcopy(model), beta=0.5)
    assert not any(p.requires_grad for p in objective.reference.parameters())
    batch = preference_batch([[5, 6], [4]], [[8], [10, 11]], [[9, 9, 9], [12]])
    loss = objective.loss(model, batch)
    assert loss.item() == pytest.approx(math.log(2), abs=1e-12)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.01 * p.grad  # a small step against the gradient lowers the loss
    metrics = objective.evaluate(model, [batch], torch.device("cpu"))
    assert metrics["valid_loss"] < math.log(2) and metrics["reward_margin"] > 0
    assert set(metrics) == {"valid_loss", "preference_accuracy", "chosen_reward", "rejected_reward", "reward_margin"}


def test_dpo_loss_does_not_see_the_prompt_but_the_rewards_do():
    """A causal model gives the shared prompt the same log-probability in the chosen and the rejected row, so
    counting the prompt's tokens cancels in the loss's difference (up to rounding), not in each reward."""
    policy, reference = gpt(), gpt()
    with torch.no_grad():
        for p in reference.parameters():
            p.add_(0.1 * torch.randn_like(p))
    prompts, chosen, rejected = [[5, 6, 7], [4]], [[8], [10, 11]], [[9, 9, 9], [12]]
    outs = []
    for answer_only in (True, False):
        batch = sft_batch([*prompts, *prompts], [*chosen, *rejected], answer_only=answer_only)
        outs.append(dpo_loss(*answer_logprobs(policy, batch), *answer_logprobs(reference, batch), beta=0.5))
    assert abs(outs[0].loss.item() - outs[1].loss.item()) < 1e-12
    gap = (outs[0].chosen_rewards - outs[1].chosen_rewards).abs()
    assert gap[0] > 1e-3 and gap[1] == 0  # row 1's prompt is one token, which nothing predicts
