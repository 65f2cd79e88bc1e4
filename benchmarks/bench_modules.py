"""Time transformer_lib's modules against their PyTorch twins (forward + backward), and the KV cache.

    python benchmarks/bench_modules.py            # batch 32, length 128, d_model 256, 4 heads
    python benchmarks/bench_modules.py --quick    # tiny sizes, a smoke run of a few seconds
    python benchmarks/bench_modules.py --device cuda

Each row builds ours and PyTorch's at the same sizes (with the same weights where ``from_torch``
exists), runs a few warm-up steps, then reports the median of several timed steps and the ratio
ours / PyTorch (at or below 1.00 means ours is as fast). The last line compares GPT generation
with and without the KV cache.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_lib import (
    GPT,
    DecoderLayer,
    EncoderLayer,
    MultiHeadAttention,
    Transformer,
    causal_mask,
    sinusoidal_positional_encoding,
)


@dataclass
class Sizes:
    batch: int
    length: int
    d_model: int
    num_heads: int
    d_ff: int
    num_layers: int
    vocab: int
    warmup: int
    repeats: int
    new_tokens: int


FULL = Sizes(batch=32, length=128, d_model=256, num_heads=4, d_ff=1024, num_layers=2, vocab=1000, warmup=3,
             repeats=10, new_tokens=200)
QUICK = Sizes(batch=4, length=32, d_model=64, num_heads=4, d_ff=128, num_layers=2, vocab=100, warmup=1,
              repeats=3, new_tokens=40)
DROPOUT = 0.1  # in the whole models, as in training; the single layers run without it


def median_ms(steps: list[Callable[[], object]], sizes: Sizes, device: torch.device) -> list[float]:
    """Median wall time of each step in milliseconds, after warm-up.

    The steps take turns, so a machine that gets busier or quieter meanwhile affects all alike.
    """
    times: list[list[float]] = [[] for _ in steps]
    for i in range(sizes.warmup + sizes.repeats):
        for step, step_times in zip(steps, times):
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            if i >= sizes.warmup:
                step_times.append(time.perf_counter() - start)
    return [1000 * statistics.median(t) for t in times]


def backward_step(run: Callable[[], Tensor]) -> Callable[[], None]:
    """Forward, a scalar loss, backward."""
    return lambda: run().pow(2).mean().backward()


def training_step(model: nn.Module, run: Callable[[], Tensor], targets: Tensor) -> Callable[[], None]:
    """Forward, cross-entropy, backward, AdamW update."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> None:
        logits = run()
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


class TorchSeq2Seq(nn.Module):
    """PyTorch's twin of ``Transformer``: the same embeddings and output layer around ``nn.Transformer``."""

    def __init__(self, s: Sizes, pad_id: int = 0) -> None:
        super().__init__()
        self.pad_id, self.scale = pad_id, s.d_model**0.5
        self.src_embedding = nn.Embedding(s.vocab, s.d_model)
        self.tgt_embedding = nn.Embedding(s.vocab, s.d_model)
        self.register_buffer("pe", sinusoidal_positional_encoding(s.length, s.d_model))
        self.dropout = nn.Dropout(DROPOUT)
        self.transformer = nn.Transformer(
            s.d_model, s.num_heads, s.num_layers, s.num_layers, s.d_ff, DROPOUT, batch_first=True
        )
        self.output_proj = nn.Linear(s.d_model, s.vocab)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        def embed(embedding: nn.Embedding, ids: Tensor) -> Tensor:
            return self.dropout(embedding(ids) * self.scale + self.pe[: ids.size(1)])

        T = tgt.size(1)
        out = self.transformer(
            embed(self.src_embedding, src),
            embed(self.tgt_embedding, tgt),
            tgt_mask=~causal_mask(T, device=tgt.device),
            src_key_padding_mask=src == self.pad_id,
            tgt_key_padding_mask=tgt == self.pad_id,
            memory_key_padding_mask=src == self.pad_id,
            tgt_is_causal=True,
        )
        return self.output_proj(out)


class TorchGPT(nn.Module):
    """PyTorch's twin of ``GPT``: pre-LN ``nn.TransformerEncoderLayer`` blocks with a causal mask."""

    def __init__(self, s: Sizes) -> None:
        super().__init__()
        self.token = nn.Embedding(s.vocab, s.d_model)
        self.position = nn.Embedding(s.length, s.d_model)
        self.dropout = nn.Dropout(DROPOUT)
        layer = nn.TransformerEncoderLayer(
            s.d_model, s.num_heads, s.d_ff, DROPOUT, activation="gelu", batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, s.num_layers, nn.LayerNorm(s.d_model), enable_nested_tensor=False)
        self.lm_head = nn.Linear(s.d_model, s.vocab, bias=False)
        self.lm_head.weight = self.token.weight

    def forward(self, idx: Tensor) -> Tensor:
        T = idx.size(1)
        x = self.dropout(self.token(idx) + self.position(torch.arange(T, device=idx.device)))
        x = self.blocks(x, mask=~causal_mask(T, device=idx.device), is_causal=True)
        return self.lm_head(x)


def benchmark_rows(s: Sizes, device: torch.device) -> list[tuple[str, float, float]]:
    """``(name, ours ms, PyTorch ms)`` for each module pair."""
    B, T, D = s.batch, s.length, s.d_model
    x = torch.randn(B, T, D, device=device, requires_grad=True)
    memory = torch.randn(B, T, D, device=device, requires_grad=True)
    lengths = torch.randint(T // 2, T + 1, (B,), device=device)
    real = torch.arange(T, device=device) < lengths[:, None]  # (B, T), True at real tokens
    key_mask = real[:, None, None, :]  # (B, 1, 1, T)
    causal = causal_mask(T, device=device)
    rows = []

    def add(name: str, ours: Callable[[], None], theirs: Callable[[], None]) -> None:
        rows.append((name, *median_ms([ours, theirs], s, device)))
        print(f"  timed {name}", flush=True)

    torch_mha = nn.MultiheadAttention(D, s.num_heads, batch_first=True).to(device)
    mha = MultiHeadAttention.from_torch(torch_mha)
    add(
        "MultiHeadAttention",
        backward_step(lambda: mha(x, x, x, key_mask, need_weights=False)[0]),
        backward_step(lambda: torch_mha(x, x, x, key_padding_mask=~real, need_weights=False)[0]),
    )

    torch_encoder = nn.TransformerEncoderLayer(D, s.num_heads, s.d_ff, dropout=0.0, batch_first=True).to(device)
    encoder = EncoderLayer.from_torch(torch_encoder)
    add(
        "EncoderLayer",
        backward_step(lambda: encoder(x, key_mask)),
        backward_step(lambda: torch_encoder(x, src_key_padding_mask=~real)),
    )

    torch_decoder = nn.TransformerDecoderLayer(D, s.num_heads, s.d_ff, dropout=0.0, batch_first=True).to(device)
    decoder = DecoderLayer.from_torch(torch_decoder)
    add(
        "DecoderLayer",
        backward_step(lambda: decoder(x, memory, key_mask, key_mask, is_causal=True)),
        backward_step(
            lambda: torch_decoder(
                x, memory, tgt_mask=~causal, tgt_key_padding_mask=~real,
                memory_key_padding_mask=~real, tgt_is_causal=True,
            )
        ),
    )

    src = torch.randint(1, s.vocab, (B, T), device=device).masked_fill(~real, 0)
    tgt = torch.randint(1, s.vocab, (B, T), device=device).masked_fill(~real, 0)
    ours = Transformer(s.vocab, s.vocab, D, s.num_heads, s.num_layers, s.num_layers, s.d_ff, DROPOUT,
                       max_len=T).to(device)
    theirs = TorchSeq2Seq(s).to(device)
    add("Transformer (train step)", training_step(ours, lambda: ours(src, tgt), tgt),
        training_step(theirs, lambda: theirs(src, tgt), tgt))

    idx = torch.randint(0, s.vocab, (B, T), device=device)
    ours = GPT(s.vocab, D, s.num_heads, s.num_layers, s.d_ff, max_len=T, dropout=DROPOUT).to(device)
    theirs = TorchGPT(s).to(device)
    add("GPT (train step)", training_step(ours, lambda: ours(idx), idx),
        training_step(theirs, lambda: theirs(idx), idx))
    return rows


def kv_cache_speedup(s: Sizes, device: torch.device) -> tuple[float, float, bool]:
    """Greedy generation of ``s.new_tokens`` tokens without and with the cache: (ms, ms, same tokens)."""
    torch.manual_seed(0)
    prompt_len = 16
    model = GPT(s.vocab, s.d_model, s.num_heads, s.num_layers, s.d_ff, max_len=prompt_len + s.new_tokens)
    model = model.to(device).eval()
    prompt = torch.randint(0, s.vocab, (1, prompt_len), device=device)
    outputs = {}

    def generate(use_cache: bool) -> Callable[[], None]:
        def run() -> None:
            outputs[use_cache] = model.generate(prompt, s.new_tokens, temperature=0, use_cache=use_cache)

        return run

    quick = Sizes(**{**s.__dict__, "warmup": 1, "repeats": 3})
    without, with_cache = median_ms([generate(False), generate(True)], quick, device)
    return without, with_cache, torch.equal(outputs[False], outputs[True])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    parser.add_argument("--device", default="auto", help='"auto" (cuda when present), "cpu" or "cuda"')
    args = parser.parse_args()
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          "cpu" if args.device == "auto" else args.device)
    s = QUICK if args.quick else FULL
    torch.manual_seed(0)
    print(
        f"device {device}, torch {torch.__version__}, {torch.get_num_threads()} threads; batch {s.batch}, "
        f"length {s.length}, d_model {s.d_model}, heads {s.num_heads}, d_ff {s.d_ff}, layers {s.num_layers}; "
        f"median of {s.repeats} after {s.warmup} warm-up",
        flush=True,
    )
    rows = benchmark_rows(s, device)
    print(f"\n{'forward + backward':<26}{'ours ms':>10}{'PyTorch ms':>12}{'ratio':>8}")
    for name, ours, theirs in rows:
        print(f"{name:<26}{ours:>10.1f}{theirs:>12.1f}{ours / theirs:>8.2f}")
    without, with_cache, same = kv_cache_speedup(s, device)
    print(
        f"\nGPT greedy generation of {s.new_tokens} tokens: {without:.0f} ms without KV cache, "
        f"{with_cache:.0f} ms with it: {without / with_cache:.1f}x faster; identical tokens: {same}"
    )


if __name__ == "__main__":
    main()
