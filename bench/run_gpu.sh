#!/usr/bin/env bash
# Every GPU test and benchmark of pycoll, in order, into one folder (issue 19).
#
#   bash bench/run_gpu.sh [--part NAME]... [--budget SECONDS] [--limit STEP=SECONDS]... [--jobs N]
#                         [--copy-to DIR] [--dry-run] [--cpu | --stand-in CMD] [OUTDIR]
#
# On a GPU machine, in the same command as its preparation (../shared/gpu/README.md), e.g.
#   bash .gpu/setup.sh && bash bench/run_gpu.sh --part build,tests-inprocess --budget 520 --copy-to "$OUT"
#
# --part takes parts or steps, several or comma-separated (default: all); they run in this order:
#   build        build (python -m pycoll.info --json: CUDA kernels, NCCL, a GPU), environment
#   tests        tests-inprocess (pytest -m gpu: the gpu tests that start no ranks), tests-nccl (the
#                NCCL engine and its failures on 2-3 ranks), tests-ranks (every other gpu test: ranks
#                on the one GPU); junit XML each; each test at most 240 s (pytest-timeout)
#   kernels      kernels (bench/bench_kernels.py --gpu)
#   collectives  collectives-1rank, collectives-2ranks (pycoll-bench all --backend nccl -c 1
#                --compare raw; the 2 ranks share the GPU), host-cost-1rank (bench/nccl_host_cost.py:
#                where an 8 B all_reduce's host time goes, with a cProfile)
#   peers        peers-1rank, peers-2ranks (bench/gpu_peers.py)
#   dp           dp-1rank, dp-2ranks (bench/data_parallel_overhead.py --device gpu --torch; on 1 rank
#                with a cProfile of 50 steps),
#                sharding-2ranks (bench/sharding.py: every level against DataParallel)
#   failures     failures (bench/detection.py --backend nccl: NCCL failure detection times)
# --jobs N runs tests-nccl and tests-ranks as N pytest-xdist workers (default 4, or the cores if
# fewer, where xdist imports, as on the GPU machine of 2026-11-26; else 1): those tests spend most
# of their time starting ranks and NCCL on 16 host cores, not on the GPU.
# A device call has 10 minutes and setup.sh takes one of them; a session's device time (15 minutes
# now, the machine's start included) held two such calls on 2026-11-27 (an H100: setup.sh 40 s,
# build + environment 11 s, tests-inprocess 131 s, tests-nccl 57 s and tests-ranks 47 s with
# --jobs 8, kernels 31 s, collectives-1rank 44 s, host-cost-1rank 4 s, peers-1rank 21 s, dp-1rank
# 17 s, failures 20-25 s without its MPI-only cases; collectives-2ranks 142 s, dp-2ranks 27 s).
# So the run is two calls, each with --budget 520 (so that it ends, packed, inside its call), the
# second at once, while the machine is warm (it goes back after 30 s idle; setup.sh's install stays):
#   --part build,tests,kernels,collectives-1rank,host-cost-1rank,peers-1rank,dp-1rank,failures --jobs 8
#   --part peers-2ranks,sharding-2ranks,collectives-2ranks,dp-2ranks  (2-rank benchmarks)
# or, after a first call with failures fixed since, the failed steps again. Before the first call,
# after ../shared/gpu/stage.sh: bash bench/stage_gpu_extras.sh (nccl4py, a peer of gpu_peers.py).
# The second call may start with `python3 -c "import mpi4py.MPI, pycoll" || bash .gpu/setup.sh`.
# On one GPU the 2-rank figures measure NCCL's socket transport between the ranks (2.4-4.6 ms a
# small call on 2026-11-27), not NVLink: ratios to raw NCCL and torch stay fair, absolute figures
# and overlap need two GPUs.
#
# Each step runs under its own time limit (--limit STEP=SECONDS changes one; --budget bounds the
# whole run: a step gets at most what is left, and none starts with under 15 s left) with its
# output in OUTDIR/STEP.log. A failing or timed-out step is recorded and the next one runs:
# nothing stops the run. Processes a step leaves behind (found by a variable in their environment)
# are killed and counted. OUTDIR (default bench/out/gpu-DATE) gets every log, JSON, PNG and junit
# XML, and summary.txt (step, part, exit status, seconds, limit, notes); after each step
# OUTDIR.tar.gz is rewritten beside it and, with --copy-to DIR, copied there with summary.txt
# (the device tool brings back at most 8 files: --copy-to "$OUT"). Start and end of each step are
# printed with the time. Exit status: 0 when every step passed, 1 otherwise, 2 for bad arguments.
# Environment: PYTHON (default python3); RUN_GPU_SWEEP_1RANK / RUN_GPU_SWEEP_2RANKS replace the
# pycoll-bench size flags; NCCL_SOCKET_IFNAME defaults to lo and NCCL_IB_DISABLE to 1.
#
# Without a GPU: --dry-run prints the steps, limits and commands and runs nothing; --cpu runs each
# step's CPU counterpart (host kernels, CPU ranks, the cpu backend) and the gpu tests unchanged on
# tests/strict_cupy.py's CuPy stand-in, in every process they start (tests/stand_in_site), less the
# six that need what the stand-in lacks (CUDA kernels through RawKernel, CuPy's streams, other
# frameworks' CUDA arrays, ranks started without MPI); --stand-in CMD runs `CMD STEP OUTDIR` in
# place of each step's command (to exercise this runner itself).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PARTS=(build tests kernels collectives peers dp failures)

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "run_gpu.sh: $*" >&2; echo "run_gpu.sh: see bash bench/run_gpu.sh --help" >&2; exit 2; }
is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

wanted=() limits=() dry_run=0 mode=gpu stand_in="" copy_to="" budget=0 outdir="" jobs=""
while (($#)); do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --part|--limit|--budget|--jobs|--copy-to|--stand-in) (($# >= 2)) || die "$1 needs a value" ;;&
    --part) IFS=, read -ra names <<<"$2"; wanted+=("${names[@]}"); shift 2 ;;
    --limit) limits+=("$2"); shift 2 ;;
    --budget) is_count "$2" || die "--budget $2: give a number of seconds"; budget=$2; shift 2 ;;
    --jobs) is_count "$2" || die "--jobs $2: give a number of pytest workers"; jobs=$2; shift 2 ;;
    --copy-to) copy_to=$(realpath -m -- "$2"); shift 2 ;;
    --stand-in) stand_in=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --cpu) mode=cpu; shift ;;
    -*) die "unknown option $1" ;;
    *) [[ -z $outdir ]] || die "one OUTDIR only (got $outdir and $1)"; outdir=$1; shift ;;
  esac
done
[[ $mode == cpu && -n $stand_in ]] && die "give --cpu or --stand-in, not both"
outdir=$(realpath -m -- "${outdir:-$ROOT/bench/out/gpu-$(date +%Y%m%d-%H%M%S)}")
cd "$ROOT" || exit 2

export PY=${PYTHON:-python3} PYTHONUNBUFFERED=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}

build_check() {  # the build step's verdict on info.json: CUDA kernels, NCCL and a GPU, or exit 1
  "$PY" - "$1" <<'EOF'
import json, os, sys
info = json.load(open(sys.argv[1]))
needs = (("the CUDA kernels", info.get("cuda_kernels")), ("NCCL", info.get("nccl")),
         ("a visible GPU", info.get("gpus")))
missing = [what for what, present in needs if not present]
print("build check:", "MISSING " + ", ".join(missing) if missing else "CUDA kernels, NCCL, a GPU")
if not os.path.isdir("../shared/seeds/examples"):  # tests/conftest.py's SEEDS
    print("warning: no ../shared/seeds/examples: the seed-example gpu tests will skip (carry .gpu)")
sys.exit(1 if missing else 0)
EOF
}

install_extras() {  # the optional peers bench/stage_gpu_extras.sh staged (nccl4py), if any
  local wheels=("$ROOT"/.gpu/extra/*.whl)
  if [[ -e ${wheels[0]} ]]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile "${wheels[@]}" && echo "installed: ${wheels[*]##*/}"
  else
    echo "no staged extras (.gpu/extra/): bash bench/stage_gpu_extras.sh stages nccl4py"
  fi
}

versions() {  # what bench/RESULTS.md quotes: CUDA, CuPy, NCCL, torch, MPI
  if command -v nvcc >/dev/null; then nvcc --version | tail -n 2; fi
  "$PY" - <<'EOF'
import platform


def cupy_():
    import cupy
    rt = cupy.cuda.runtime
    return f"{cupy.__version__}, CUDA runtime {rt.runtimeGetVersion()}, driver {rt.driverGetVersion()}"


def nccl_():
    from cupy.cuda import nccl
    v = nccl.get_version()
    return f"{v // 10000}.{v // 100 % 100}.{v % 100} (CuPy built with {nccl.get_build_version()})"


def torch_():
    import torch
    theirs = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-"
    return f"{torch.__version__}, CUDA {torch.version.cuda}, its NCCL {theirs}"


def nccl4py_():
    from importlib.metadata import version
    import nccl.core  # noqa: F401 - bench/gpu_peers.py's import
    return version("nccl4py")


def mpi_():
    import mpi4py
    from mpi4py import MPI
    return f"mpi4py {mpi4py.__version__}, {MPI.Get_library_version().splitlines()[0].strip()}"


print("python", platform.python_version())
for label, get in (("cupy", cupy_), ("nccl", nccl_), ("torch", torch_), ("nccl4py", nccl4py_), ("mpi", mpi_)):
    try:
        print(label, get())
    except Exception as exc:  # a missing piece is a fact to report
        print(label, "unavailable:", type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
EOF
}
export -f build_check versions

junit_counts() {  # "N passed, N failed, N errors, N skipped" of a junit XML file
  "$PY" - "$1" <<'EOF' 2>/dev/null
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
n = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
print(f"{n['tests'] - n['failures'] - n['errors'] - n['skipped']} passed, {n['failures']} failed, "
      f"{n['errors']} errors, {n['skipped']} skipped")
EOF
}

# -- the steps -------------------------------------------------------------------------------
STEPS=()
declare -A PART_OF LIMIT COMMAND
step() { STEPS+=("$2"); PART_OF[$2]=$1; LIMIT[$2]=$3; COMMAND[$2]=$4; }

O=$(printf %q "$outdir")
launch="\$PY -m pycoll.launch --nproc_per_node"
if [[ -z $jobs ]]; then
  cores=$(nproc)
  if "$PY" -c "import xdist" 2>/dev/null; then jobs=$((cores < 4 ? cores : 4)); else jobs=1; fi
elif ((jobs > 1)) && ! "$PY" -c "import xdist" 2>/dev/null; then
  die "--jobs $jobs needs pytest-xdist in $PY"
fi
workers=""
((jobs > 1)) && workers="-n $jobs"
pytest="\$PY -m pytest -m gpu -p no:cacheprovider -v -rfEs --durations=25 --timeout 240"
if [[ $mode == cpu ]]; then
  stand_in_gaps="test_nccl.py::test_every_collective_and_dtype_on_nccl_ranks_sharing_one_gpu[2]
    test_nccl.py::test_every_collective_and_dtype_on_nccl_ranks_sharing_one_gpu[3]
    test_nccl.py::test_arrays_of_other_frameworks_on_a_gpu_through_dlpack_and_cuda_array_interface
    test_nccl.py::test_torchrun_style_store_rendezvous_and_the_backend_directly
    test_device_api.py::test_on_a_gpu_streams_events_and_memory_are_cupys test_toplevel_rest.py::test_cuda_on_a_gpu"
  pytest="PYCOLL_TEST_STRICT_GPU=1 PYTHONPATH=$(printf %q "$ROOT/tests/stand_in_site") $pytest"
  for t in $stand_in_gaps; do pytest+=" --deselect $(printf %q "tests/$t")"; done
fi
rank_tests="tests/test_nccl.py tests/test_nccl_failures.py"
in_process_tests="tests/test_kernels_gpu.py tests/test_tensor.py tests/test_gpu_cases.py tests/test_amp.py
  tests/test_device_api.py tests/test_higher_order.py tests/test_inplace_version.py tests/test_nn_rnn.py
  tests/test_printing.py tests/test_toplevel_rest.py tests/test_view_writes.py tests/test_vision_ops.py
  tests/test_device_math.py"
in_process_tests=$(echo $in_process_tests)
others="tests$(for t in $in_process_tests $rank_tests; do printf ' --ignore=%s' "$t"; done)"
if [[ $mode == gpu ]]; then
  backend=nccl check="&& build_check $O/info.json"
  environment="install_extras; nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_mode --format=csv; versions"
  sweep1=${RUN_GPU_SWEEP_1RANK:--b 8 -e 256M -f 2}
  sweep2=${RUN_GPU_SWEEP_2RANKS:--b 16 -e 256M -f 4 -n 20 -w 3}
  kernels="bench/bench_kernels.py --gpu" peers="bench/gpu_peers.py --rounds 5" host_cost=""
  # a small call between ranks sharing the GPU takes 2-5 ms (NCCL's socket transport): the
  # default 1 000 calls a block at 42 sizes for 4-5 contenders ran past 130 s on 2026-11-28
  peers2="bench/gpu_peers.py --rounds 3 --max-iters 20 --sizes 8,1K,64K,1M,16M,64M"
  dp="bench/data_parallel_overhead.py --device gpu --torch" dp1="--profile 50"
else
  export PYCOLL_DEVICE=cpu OMP_NUM_THREADS=1
  backend=cpu check="" environment="uname -srm && nproc --all && versions"
  sweep1=${RUN_GPU_SWEEP_1RANK:--b 8 -e 1M -f 8} sweep2=${RUN_GPU_SWEEP_2RANKS:--b 8 -e 1M -f 8}
  kernels="bench/bench_kernels.py --reps 11" peers="bench/cpu_peers.py --rounds 2" peers2=$peers host_cost="--stand-in"
  dp="bench/data_parallel_overhead.py --device cpu --steps 3 --rounds 2" dp1="--profile 3"
  if ((!dry_run)) && "$PY" -c "import torch" 2>/dev/null; then dp+=" --torch"; fi
fi
bench="\$PY -m pycoll.bench all --backend $backend -c 1 --compare raw"

step build build 60 "\$PY -m pycoll.info --json > $O/info.json && \$PY -m pycoll.info $check"
step build environment 60 "$environment"
step tests tests-inprocess 240 "$pytest --junitxml=$O/tests-inprocess.xml $in_process_tests"
step tests tests-nccl 300 "$pytest $workers --junitxml=$O/tests-nccl.xml $rank_tests"
step tests tests-ranks 400 "$pytest $workers --junitxml=$O/tests-ranks.xml $others"
step kernels kernels 120 "\$PY $kernels --json $O/kernels.json"
step collectives collectives-1rank 150 \
  "$bench --nprocs 1 $sweep1 --json $O/collectives-1rank.json --plot $O/collectives-1rank.png"
step collectives host-cost-1rank 60 "\$PY bench/nccl_host_cost.py $host_cost --json $O/host-cost-1rank.json"
step collectives collectives-2ranks 300 \
  "$bench --nprocs 2 $sweep2 --json $O/collectives-2ranks.json --plot $O/collectives-2ranks.png"
step peers peers-1rank 120 "$launch 1 $peers --plot $O/peers-1rank.png"
step peers peers-2ranks 180 "$launch 2 $peers2 --plot $O/peers-2ranks.png"
step dp dp-1rank 120 "\$PY $dp $dp1"
step dp dp-2ranks 240 "$launch 2 $dp"
step dp sharding-2ranks 120 "$launch 2 bench/sharding.py --rounds 3 --hidden 1024"
step failures failures 240 "\$PY bench/detection.py --backend $backend --repeat 1"
if [[ -n $stand_in ]]; then
  for name in "${STEPS[@]}"; do COMMAND[$name]="$stand_in $name $O"; done
fi

for item in "${limits[@]}"; do
  name=${item%%=*} seconds=${item#*=}
  [[ -n ${LIMIT[$name]+set} ]] || die "--limit $item: no step is called $name"
  is_count "$seconds" || die "--limit $item: give STEP=SECONDS"
  LIMIT[$name]=$seconds
done

((${#wanted[@]})) || wanted=(all)
declare -A chosen
for name in "${wanted[@]}"; do
  found=0
  for s in "${STEPS[@]}"; do
    if [[ $name == all || $name == "${PART_OF[$s]}" || $name == "$s" ]]; then chosen[$s]=1 found=1; fi
  done
  ((found)) || die "--part $name: not a part (${PARTS[*]}, all) nor a step (${STEPS[*]})"
done
selected=()
total=0
for s in "${STEPS[@]}"; do
  if [[ -n ${chosen[$s]+set} ]]; then selected+=("$s"); total=$((total + LIMIT[$s])); fi
done

plan="${#selected[@]} step(s), limits adding up to $total s"
if ((dry_run)); then
  echo "run_gpu.sh --dry-run ($mode): $plan; output would go to $outdir"
  for s in "${selected[@]}"; do
    printf '[%s] %s (limit %s s)\n    %s\n' "${PART_OF[$s]}" "$s" "${LIMIT[$s]}" "${COMMAND[$s]}"
  done
  exit 0
fi

# -- the run -------------------------------------------------------------------------------------
command -v "$PY" >/dev/null || die "no $PY here: set PYTHON to the Python that has pycoll"
PATH="$("$PY" -c 'import os, sys; print(os.path.dirname(sys.executable))'):$PATH"  # mpiexec, nvcc
mkdir -p "$outdir" || die "cannot make $outdir"
[[ -z $copy_to ]] || mkdir -p "$copy_to" || die "cannot make $copy_to"
summary=$outdir/summary.txt tarball=$outdir.tar.gz
{
  echo "# bash bench/run_gpu.sh --part $(IFS=,; echo "${selected[*]}") ($mode)"
  echo "# $(date -Is) on $(hostname), git $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
  printf '%-20s %-12s %5s %8s %6s  %s\n' step part exit seconds limit notes
} >"$summary"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

reap() {  # kill the processes of a step still running after it (they carry its token), by pid
  local token=$1 env pid killed=()
  for env in /proc/[0-9]*/environ; do
    pid=${env#/proc/} pid=${pid%/environ}
    if grep -qzxF "PYCOLL_RUN_GPU_STEP=$token" "$env" 2>/dev/null && kill -KILL "$pid" 2>/dev/null; then
      killed+=("$pid")
    fi
  done
  ((${#killed[@]} == 0)) || echo "killed ${#killed[@]} leftover process(es): ${killed[*]}"
}

pack() {  # the tarball beside OUTDIR, and its copies
  tar -czf "$tarball.part" -C "$(dirname "$outdir")" "$(basename "$outdir")" && mv -f "$tarball.part" "$tarball"
  [[ -z $copy_to ]] || cp -f "$tarball" "$summary" "$copy_to/"
}

echo "run_gpu.sh ($mode): $plan$( ((budget)) && echo ", budget $budget s"); output in $outdir"
started=$(now) failed=0
for s in "${selected[@]}"; do
  limit=${LIMIT[$s]} log=$outdir/$s.log notes=""
  if ((budget)); then
    left=$(awk -v b="$budget" -v e="$(elapsed "$started")" 'BEGIN { printf "%d", b - e }')
    if ((left < 15)); then
      printf '%-20s %-12s %5s %8s %6s  %s\n' "$s" "${PART_OF[$s]}" - - "$limit" "not run: budget spent" >>"$summary"
      echo "[$(date +%T)] --- $s: not run, the budget is spent"
      failed=1
      continue
    fi
    ((limit > left - 5)) && limit=$((left - 5))
  fi
  echo "[$(date +%T)] >>> $s (limit $limit s): ${COMMAND[$s]}"
  t0=$(now)
  PYCOLL_RUN_GPU_STEP="$$-$s" timeout --kill-after=10 "$limit" bash -c "${COMMAND[$s]}" >"$log" 2>&1 </dev/null
  status=$?
  seconds=$(elapsed "$t0")
  leftovers=$(reap "$$-$s")
  case $status in 124|137) notes="timed out" ;; esac
  [[ -f $outdir/$s.xml ]] && notes+="${notes:+; }$(junit_counts "$outdir/$s.xml")"
  [[ -n $leftovers ]] && { notes+="${notes:+; }$leftovers"; echo "run_gpu.sh: $leftovers" >>"$log"; }
  printf '%-20s %-12s %5s %8s %6s  %s\n' "$s" "${PART_OF[$s]}" "$status" "$seconds" "$limit" "$notes" >>"$summary"
  echo "[$(date +%T)] <<< $s: exit $status after $seconds s${notes:+ ($notes)}"
  if ((status != 0)); then
    failed=1
    tail -n 20 "$log" | sed 's/^/    | /'
  fi
  pack
done
echo
cat "$summary"
echo "output: $outdir (and $tarball)${copy_to:+; copied to $copy_to}"
exit "$failed"
