#!/usr/bin/env bash
# Every GPU path of transformer_lib, run through the command lines on a CUDA machine (CI has none):
# bf16 / fp16 autocast and fp32, torch.compile, a checkpoint resumed, the GPT, g2p and its
# pronouncer, and the module benchmark against PyTorch. Each run prints its last lines and its time.
#
#     PYTHON=python3 bash benchmarks/gpu_paths.sh   # PYTHON: one with a CUDA build of PyTorch
set -u
PYTHON=${PYTHON:-python3}
cd "$(dirname "$0")/.." && export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # transformer_lib, installed or not
out=$(mktemp -d)
run() {
    echo "=== $*"
    local start=$SECONDS
    "$@" 2>&1 | grep -v '^\s*$' | tail -"${TAIL:-6}"
    echo "--- $((SECONDS - start)) s"
}
"$PYTHON" -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print('torch', torch.__version__, torch.cuda.get_device_name(), 'bf16:', torch.cuda.is_bf16_supported())" || exit 1
train() { run "$PYTHON" -m transformer_lib.train --device cuda --quiet "$@"; }
train --task reverse --out "$out/reverse"                  # precision auto: bf16 autocast
train --task reverse --precision fp16 --out "$out/fp16"
train --task reverse --precision fp32 --out "$out/fp32"
train --task reverse --compile --out "$out/compiled"
train --task reverse --max-steps 600 --checkpoint-every 200 --out "$out/resumed"
train --task reverse --max-steps 1200 --checkpoint-every 200 --out "$out/resumed" --resume
train --task text --model gpt --max-steps 600 --out "$out/gpt"
train --task text --model gpt --max-steps 600 --compile --out "$out/gpt_compiled"
train --task g2p --max-steps 1500 --out "$out/g2p"
run "$PYTHON" -m transformer_lib.pronounce --run "$out/g2p" --beam-size 4 ghoti phoenix
TAIL=40 run "$PYTHON" benchmarks/bench_modules.py --device cuda
rm -rf "$out"
