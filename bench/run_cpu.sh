#!/usr/bin/env bash
# Every CPU benchmark in one go, printing the tables bench/RESULTS.md quotes.
#   bash bench/run_cpu.sh            (needs `pip install -e .`; torch for the gloo column, matplotlib for plots)
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1  # one core per rank, as the ranks share the machine
launch="python -m pycoll.launch --nproc_per_node 2"

echo "## all_reduce against raw mpi4py"; $launch bench/allreduce_vs_mpi4py.py
echo "## all_reduce beside mpi4py and gloo"; $launch bench/cpu_peers.py --plot bench/cpu_peers.png
echo "## pycoll-bench --compare raw"; pycoll-bench all_reduce -b 1K -e 64M -f 4 --compare raw
echo "## host kernels"; python bench/bench_kernels.py
echo "## DataParallel, world size 1"; python bench/data_parallel_overhead.py
echo "## DataParallel, world size 2"; $launch bench/data_parallel_overhead.py
echo "## soak"; $launch bench/soak.py
echo "## failure detection"; python bench/detection.py
