#!/usr/bin/env bash
# Stage the optional GPU peers that the GPU machine's image lacks, for bench/gpu_peers.py:
# NVIDIA's nccl4py (its own wheel only: the image has cuda-core, cuda-bindings, cuda-pathfinder
# and nvidia-nccl-cu13), and cloudpickle. Run here, from the project root, after ../shared/gpu/stage.sh; the wheel
# goes to .gpu/extra/ (git ignores .gpu), travels with `carry: [".gpu"]`, and bench/run_gpu.sh's
# environment step installs it on the GPU machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ -d .gpu ]] || { echo "stage_gpu_extras.sh: no .gpu/ here: run bash ../shared/gpu/stage.sh first" >&2; exit 2; }
mkdir -p .gpu/extra
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 -d .gpu/extra "nccl4py==${NCCL4PY_VERSION:-0.6.0}"
# cloudpickle, a dependency of pycoll the image lacks and setup.sh's --no-deps install skips
# (pycoll.jit.save needs it; import pycoll does not)
python3 -m pip download -q --no-deps --only-binary=:all: -d .gpu/extra "cloudpickle>=2.0"
ls .gpu/extra
