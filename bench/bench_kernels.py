"""Kernels of pycoll.kernels against the best code of their peers for the same job.

    python bench/bench_kernels.py [--reps 41] [--arrays 200] [--mib 25] [--json F]        # host
    python bench/bench_kernels.py --gpu [--reps 41] [--arrays 100] [--mib 25] [--json F]  # CUDA

Host: the workload is a gradient bucket: --arrays float32 arrays of mixed sizes, --mib MiB in all.
Each case times pycoll and NumPy one call at a time, interleaved, --reps times, and reports
medians; "speedup" is NumPy's median over pycoll's (above 1: pycoll is faster). Results are checked
for equality before timing. Single-threaded on both sides.

GPU (--gpu, needs CuPy and a GPU; torch is compared too where it imports): the same bucket on the
device against CuPy's device-to-device copy, and 1000 small arrays against per-array copies,
cupy.concatenate and torch.cat; see bench_kernels_gpu.py. --json writes the medians as JSON.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
from typing import List, Optional

import numpy as np

from pycoll import kernels


def bucket(count, mib, seed=0):
    """count float32 arrays of log-uniform sizes (16 to 1M elements) totalling mib MiB, with a
    mix of shapes, as a model's gradients would be."""
    rng = np.random.default_rng(seed)
    total = mib * (1 << 20) // 4
    weights = np.exp(rng.uniform(np.log(16), np.log(1 << 20), count))
    sizes = np.maximum(1, (weights / weights.sum() * total).astype(np.int64))
    sizes[np.argmax(sizes)] += total - sizes.sum()
    arrays = []
    for n in sizes:
        a = rng.standard_normal(int(n)).astype(np.float32)
        arrays.append(a.reshape(-1, 8) if n % 8 == 0 else a)
    return arrays


def offsets_of(arrays):
    return np.concatenate([[0], np.cumsum([a.size for a in arrays])]).tolist()


def host_cases(arrays):
    """(name, bytes moved per call, pycoll callable, NumPy callable, check) for each case."""
    n = sum(a.size for a in arrays)
    offs = offsets_of(arrays)
    flat = np.concatenate([a.ravel() for a in arrays])
    out32 = np.empty(n, np.float32)
    out16 = np.empty(n, np.float16)
    dst_k = [np.empty_like(a) for a in arrays]
    dst_n = [np.empty_like(a) for a in arrays]
    scale = 1 / 3

    def np_unflatten_copy_mul():
        for a, o in zip(dst_n, offs):
            np.copyto(a, flat[o : o + a.size].reshape(a.shape))
            a *= scale

    def np_unflatten_multiply_out():
        for a, o in zip(dst_n, offs):
            np.multiply(flat[o : o + a.size].reshape(a.shape), scale, out=a)

    def np_unflatten_copy():
        for a, o in zip(dst_n, offs):
            np.copyto(a, flat[o : o + a.size].reshape(a.shape))

    def same_arrays():
        return all(np.array_equal(x, y) for x, y in zip(dst_k, dst_n))

    b32, b16 = 4 * n, 2 * n
    return [
        (
            "flatten (allocates)",
            2 * b32,
            lambda: kernels.flatten(arrays),
            lambda: np.concatenate([a.ravel() for a in arrays]),
            lambda: np.array_equal(kernels.flatten(arrays), flat),
        ),
        (
            "flatten out=",
            2 * b32,
            lambda: kernels.flatten(arrays, out32),
            lambda: np.concatenate([a.ravel() for a in arrays], out=out32),
            lambda: np.array_equal(kernels.flatten(arrays, out32), flat),
        ),
        (
            "flatten out= scale, ->f16",
            b32 + b16,
            lambda: kernels.flatten(arrays, out16, scale=scale, dtype=np.float16),
            lambda: np.multiply(np.concatenate([a.ravel() for a in arrays]), scale).astype(
                np.float16
            ),
            lambda: np.array_equal(
                kernels.flatten(arrays, out16, scale=scale, dtype=np.float16),
                (flat * scale).astype(np.float16),
            ),
        ),
        (
            "unflatten",
            2 * b32,
            lambda: kernels.unflatten(flat, dst_k),
            np_unflatten_copy,
            lambda: (kernels.unflatten(flat, dst_k), np_unflatten_copy(), same_arrays())[-1],
        ),
        (
            "unflatten scale vs copy+mul",
            2 * b32,
            lambda: kernels.unflatten(flat, dst_k, scale=scale),
            np_unflatten_copy_mul,
            lambda: (
                kernels.unflatten(flat, dst_k, scale=scale),
                np_unflatten_copy_mul(),
                same_arrays(),
            )[-1],
        ),
        (
            "unflatten scale vs multiply(out=)",
            2 * b32,
            lambda: kernels.unflatten(flat, dst_k, scale=scale),
            np_unflatten_multiply_out,
            lambda: (
                kernels.unflatten(flat, dst_k, scale=scale),
                np_unflatten_multiply_out(),
                same_arrays(),
            )[-1],
        ),
    ]


def run(cases, reps, warmup=3):
    """Medians in seconds, {name: (pycoll, numpy)}. Case by case (so that one case's allocations
    do not disturb another's), pycoll and NumPy calls alternate, each going first in turn."""
    medians = {}
    for name, _, ours, theirs, check in cases:
        if not check():
            raise SystemExit(f"bench_kernels: {name}: pycoll and NumPy disagree")
        for _ in range(warmup):
            ours(), theirs()
        times = ([], [])
        for r in range(reps):
            for side in (0, 1) if r % 2 == 0 else (1, 0):
                fn = ours if side == 0 else theirs
                t0 = time.perf_counter()
                fn()
                times[side].append(time.perf_counter() - t0)
        medians[name] = (statistics.median(times[0]), statistics.median(times[1]))
    return medians


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpu", action="store_true", help="time the CUDA kernels (needs CuPy, a GPU)")
    p.add_argument("--reps", type=int, default=41, help="timed calls per case and side")
    p.add_argument("--arrays", type=int, default=None,
                   help="arrays in the bucket (default 200; 100 with --gpu)")
    p.add_argument("--mib", type=int, default=25, help="bucket size in MiB (float32)")
    p.add_argument("--json", metavar="FILE", help="also write the medians to FILE as JSON")
    args = p.parse_args(argv)
    arrays = bucket(args.arrays or (100 if args.gpu else 200), args.mib)
    if args.gpu:
        from bench_kernels_gpu import run as run_gpu  # bench/ is on sys.path: this script's folder

        return run_gpu(args, argv, arrays)

    info = kernels.build_info()
    print(f"command: python bench/bench_kernels.py {' '.join(argv or sys.argv[1:])}".rstrip())
    print(
        f"device:  {cpu_name()}, {os.cpu_count()} cores; numpy {np.__version__}, "
        f"python {platform.python_version()}, pycoll._C by {info['compiler']}"
    )
    print(
        f"bucket:  {len(arrays)} float32 arrays, {sum(a.nbytes for a in arrays) / 2**20:.1f} MiB, "
        f"sizes {min(a.size for a in arrays)}..{max(a.size for a in arrays)}; "
        f"median of {args.reps} interleaved calls\n"
    )

    cases = host_cases(arrays)
    medians = run(cases, args.reps)
    head = f"{'case':<34} {'pycoll ms':>9} {'numpy ms':>9} {'speedup':>8} {'pycoll GB/s':>11}"
    print(head)
    print("-" * len(head))
    for name, nbytes, *_ in cases:
        ours, theirs = medians[name]
        print(
            f"{name:<34} {ours * 1e3:9.3f} {theirs * 1e3:9.3f} {theirs / ours:7.2f}x "
            f"{nbytes / ours / 1e9:11.1f}"
        )
    print(
        "\nnumpy sides: concatenate of ravel()s (out= where named); (concatenate * s).astype(f16);"
        "\nper array copyto; per array copyto then *= s; per array multiply(slice, s, out=a)."
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": cpu_name(), "build": info, "reps": args.reps,
                       "cases": [{"case": name, "pycoll_s": ours, "numpy_s": theirs}
                                 for name, (ours, theirs) in medians.items()]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
