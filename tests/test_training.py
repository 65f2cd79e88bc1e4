"""The trainer: config checks, devices, schedules, determinism, exact resume, atomic checkpoints."""

import math
import shutil
import subprocess
import sys

import pytest
import torch
from torch import nn

from transformer_lib.objectives import ClassifierObjective, LMObjective, Seq2SeqObjective, translation_scores
from transformer_lib.run_state import History
from transformer_lib.runtime import autocast_dtype, load_checkpoint, save_checkpoint, select_device
from transformer_lib.tasks import copy_task, text_task
from transformer_lib.train_config import TrainConfig, lr_factor
from transformer_lib.trainer import Trainer, fit, weight_decay_groups

from library_helpers import TinyEncDec


@pytest.fixture(scope="module")
def task():
    return copy_task(n_train=96, n_valid=16, n_test=16, length=5, min_length=2, n_symbols=6)


def run(task, stop_at=None, resume_from=None, dropout=0.2, **fields):
    """Build a fresh model and trainer (same seeds each time) and train it."""
    torch.manual_seed(0)
    model = TinyEncDec(vocab_size=len(task.vocab), dropout=dropout)
    config = TrainConfig(**{"max_steps": 12, "lr": 1e-2, "warmup_steps": 3, "progress": False, **fields})
    trainer = Trainer(model, Seq2SeqObjective(), config, task.loader("train", 16), task.loader("valid", 8))
    if resume_from:
        trainer.resume(resume_from)
    return trainer, trainer.fit(stop_at=stop_at)


@pytest.mark.parametrize("fields, message", [
    ({"lr": -1.0}, "lr must be > 0, got -1.0"),
    ({"schedule": "linear"}, "schedule must be one of .*got 'linear'"),
    ({"max_steps": 0}, "max_steps must be an integer >= 1, got 0"),
    ({"accumulation_steps": 0}, "accumulation_steps must be an integer >= 1"),
    ({"target_metric": "exact_match"}, "must be given together"),
    ({"target_metric": "wer", "target_value": 0.1}, "target_direction must be given together"),
    ({"target_metric": "wer", "target_value": 0.1, "target_direction": "down"}, "target_direction must be one of"),
    ({"device": "gpu"}, "device must be 'auto' or a torch device.*got 'gpu'"),
    ({"precision": "fp8"}, "precision must be one of"),
])
def test_bad_config_raises_clear_errors(fields, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**fields)


@pytest.mark.parametrize("objective", [Seq2SeqObjective, LMObjective, ClassifierObjective])
def test_bad_label_smoothing_raises(objective):
    with pytest.raises(ValueError, match=r"label_smoothing must be in \[0, 1\), got 1.0"):
        objective(label_smoothing=1.0)


def test_bad_trainer_arguments(task):
    model = TinyEncDec(vocab_size=len(task.vocab))
    with pytest.raises(TypeError, match="must have loss and evaluate methods, or be a loss function, got str"):
        Trainer(model, "seq2seq", TrainConfig(), task.loader("train", 16))
    with pytest.raises(ValueError, match="needs a valid_loader"):
        config = TrainConfig(target_metric="exact_match", target_value=1.0, target_direction="max")
        Trainer(model, Seq2SeqObjective(), config, task.loader("train", 16))
    with pytest.raises(TypeError, match="config must be a TrainConfig, got dict"):
        Trainer(model, Seq2SeqObjective(), {"lr": 1e-3}, task.loader("train", 16))


def test_device_selection_follows_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert select_device("auto") == torch.device("cuda", 0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert select_device("auto") == torch.device("mps")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert select_device("auto") == torch.device("cpu")
    with pytest.raises(ValueError, match="'cuda' was asked for, but CUDA is not available"):
        select_device("cuda")


def test_mixed_precision_choice(monkeypatch):
    cuda = torch.device("cuda", 0)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    assert autocast_dtype(cuda) is torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    assert autocast_dtype(cuda) is torch.float16
    assert autocast_dtype(torch.device("cpu")) is None  # off on CPU unless asked
    assert autocast_dtype(torch.device("cpu"), "bf16") is torch.bfloat16


def test_cpu_bf16_autocast_trains(task):
    trainer, history = run(task, precision="bf16", max_steps=4)
    assert trainer.dtype is torch.bfloat16 and not trainer.scaler.is_enabled()
    assert all(math.isfinite(x) for x in history.loss)


@pytest.mark.slow  # torch.compile
@pytest.mark.skipif(shutil.which("g++") is None and shutil.which("c++") is None,
                    reason="torch.compile on CPU needs a C++ compiler")
def test_compiled_model_trains_like_the_eager_one(task):
    eager, eager_history = run(task, max_steps=4, dropout=0.0)
    compiled, compiled_history = run(task, max_steps=4, dropout=0.0, compile=True)
    assert compiled.wrapped_model is not compiled.model  # the step calls the compiled wrapper, saves the model
    assert set(compiled.state_dict()["model"]) == set(eager.state_dict()["model"])
    torch.testing.assert_close(compiled_history.loss, eager_history.loss, rtol=1e-4, atol=1e-5)


def test_schedules():
    paper = TrainConfig(schedule="inverse_sqrt", warmup_steps=100)
    assert lr_factor(50, paper) == pytest.approx(0.5) and lr_factor(100, paper) == pytest.approx(1.0)
    assert lr_factor(400, paper) == pytest.approx(0.5)  # 1 / sqrt(step) after the warm-up
    cosine = TrainConfig(schedule="cosine", warmup_steps=10, max_steps=110)
    assert lr_factor(60, cosine) == pytest.approx(0.5) and lr_factor(110, cosine) == pytest.approx(0.0)


def test_weight_decay_skips_biases_norms_and_embeddings():
    model = nn.Sequential(nn.Embedding(5, 4), nn.LayerNorm(4), nn.Linear(4, 3))
    decay, no_decay = weight_decay_groups(model, 0.1)
    assert [p.shape for p in decay["params"]] == [(3, 4)] and decay["weight_decay"] == 0.1
    assert len(no_decay["params"]) == 4 and no_decay["weight_decay"] == 0.0


def test_seeded_runs_are_identical_and_learn(task):
    _, a = run(task, eval_every=6)
    _, b = run(task, eval_every=6)
    assert a.loss == b.loss and a.metrics == b.metrics
    assert a.steps == list(range(1, 13)) and a.eval_steps == [6, 12]
    assert a.loss[-1] < a.loss[0] and set(a.metrics) == {"valid_loss", "token_accuracy", "exact_match"}


def test_resume_continues_exactly_as_an_uninterrupted_run(task, tmp_path):
    # dropout, accumulation, a cosine schedule and an epoch boundary (6 batches per epoch) inside
    fields = {"schedule": "cosine", "accumulation_steps": 2, "eval_every": 4}
    _, whole = run(task, **fields)
    ckpt = tmp_path / "ckpt.pt"
    paused, first = run(task, stop_at=5, checkpoint_path=str(ckpt), **fields)
    assert paused.step == 5 and first.loss == whole.loss[:5]
    _, resumed = run(task, resume_from=ckpt, **fields)
    assert resumed.loss == whole.loss  # loss by loss, bit for bit
    assert resumed.metrics == whole.metrics and resumed.lr == whole.lr


def test_checkpoint_holds_everything(task, tmp_path):
    trainer, _ = run(task, max_steps=2, checkpoint_path=str(tmp_path / "c.pt"))
    state = load_checkpoint(tmp_path / "c.pt")
    assert {"model", "optimizer", "scaler", "rng", "step", "history", "config"} <= set(state)
    assert state["step"] == 2 and History(**state["history"]).loss == trainer.history.loss


KILLED_WRITER = """
import os, signal, sys, torch
from transformer_lib.runtime import save_checkpoint

def torn_save(obj, f):
    f.write(b"half a checkpoint")
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)  # the process dies in the middle of the write

torch.save = torn_save
save_checkpoint({"step": 2}, sys.argv[1])
"""


def test_killed_write_leaves_the_previous_checkpoint_loadable(tmp_path):
    path = tmp_path / "ckpt.pt"
    save_checkpoint({"step": 1, "w": torch.ones(3)}, path)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], capture_output=True)
    assert proc.returncode == -9
    assert load_checkpoint(path)["step"] == 1


def test_early_stop_at_target(task):
    """The config says which way the metric improves: a loss at most 100 is reached at once, at least 100 never."""
    target = {"target_metric": "valid_loss", "target_value": 100.0}
    _, history = run(task, max_steps=50, eval_every=2, target_direction="min", **target)
    assert history.stopped_early and history.steps[-1] == 2
    _, history = run(task, max_steps=4, eval_every=2, target_direction="max", **target)
    assert not history.stopped_early and history.steps[-1] == 4


def test_language_model_and_custom_loss():
    text = text_task(block_size=8, text="abcdefgh" * 200)

    class Bigram(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.table = nn.Embedding(n, n)

        def forward(self, idx):
            return self.table(idx)

    config = TrainConfig(max_steps=60, lr=0.3, schedule="constant", warmup_steps=1, progress=False)
    history = fit(Bigram(len(text.vocab)), LMObjective(), text.loader("train", 8), text.loader("valid", 4), config)
    assert history.last("valid_loss") < 0.5 * math.log(len(text.vocab))
    custom = fit(Bigram(len(text.vocab)), lambda m, b: m(b["idx"]).logsumexp(-1).mean(), text.loader("train", 8),
                 text.loader("valid", 4), config, max_steps=2)
    assert list(custom.metrics) == ["valid_loss"]


def test_classifier_objective():
    torch.manual_seed(0)
    src = torch.randint(4, 10, (64, 6))
    batches = [{"src": src[i:i + 16], "label": (src[i:i + 16, 0] > 6).long()} for i in range(0, 64, 16)]
    model = nn.Sequential(nn.Embedding(10, 8), nn.Flatten(), nn.Linear(48, 2))
    history = fit(model, ClassifierObjective(), batches, batches, max_steps=40, lr=0.05, schedule="inverse_sqrt",
                  warmup_steps=1, progress=False)
    assert history.last("accuracy") > 0.9


def test_translation_scores_beam_search_uses_the_length_penalty(task, beam_search_calls):
    torch.manual_seed(0)
    model = TinyEncDec(vocab_size=len(task.vocab))
    greedy = translation_scores(model, task, "test")
    assert beam_search_calls == [] and set(greedy) == {"exact_match", "token_accuracy", "bleu"}
    beam = translation_scores(model, task, "test", beam_size=3, alpha=1.0)
    assert beam_search_calls == [(3, 1.0)] and all(0.0 <= value <= 100.0 for value in beam.values())
