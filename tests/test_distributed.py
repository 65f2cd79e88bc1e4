"""Data parallelism: two CPU processes under torchrun (gloo) train and end with equal weights."""

import os
import socket
import subprocess
import sys

import pytest
import torch

pytestmark = pytest.mark.slow  # torchrun starts two training processes
WORKER = """
import sys, torch
from transformer_lib.models import Transformer
from transformer_lib.tasks import reverse_task
from transformer_lib.objectives import Seq2SeqObjective
from transformer_lib.runtime import setup_distributed
from transformer_lib.train_config import TrainConfig
from transformer_lib.trainer import Trainer

rank, world = setup_distributed()
task = reverse_task(n_train=64, n_valid=8, n_test=8, length=4, n_symbols=5)
torch.manual_seed(100 + rank)  # different weights on each rank: DDP must start from rank 0's
n = len(task.vocab)
model = Transformer(n, n, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32)
start = {k: v.clone() for k, v in model.state_dict().items()}
config = TrainConfig(max_steps=4, lr=1e-2, schedule="inverse_sqrt", warmup_steps=1, device="cpu", progress=False,
                     checkpoint_path=sys.argv[1] + "/ckpt.pt")
trainer = Trainer(model, Seq2SeqObjective(), config, task.loader("train", 8), task.loader("valid", 4))
history = trainer.fit()
shard = [i for batch in task.loader("train", 8).batch_sampler for i in batch]
torch.save({"weights": model.state_dict(), "start": start, "loss": history.loss, "world": world,
            "shard": shard, "metrics": history.metrics}, f"{sys.argv[1]}/rank{rank}.pt")
"""


def test_two_process_gloo_run_keeps_ranks_in_step(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_addr=127.0.0.1",
           f"--master_port={port}", str(script), str(tmp_path)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r0, r1 = (torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1))
    assert r0["world"] == r1["world"] == 2
    assert not set(r0["shard"]) & set(r1["shard"])  # each rank trains on its own half of the data
    assert r0["loss"] == r1["loss"] and r0["metrics"] == r1["metrics"]  # averaged over ranks
    for name, weight in r0["weights"].items():
        assert torch.equal(weight, r1["weights"][name]), name
    assert not torch.equal(r0["weights"]["output_proj.weight"], r0["start"]["output_proj.weight"])
    assert (tmp_path / "ckpt.pt").is_file()
