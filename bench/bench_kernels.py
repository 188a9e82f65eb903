"""Kernels of pycoll.kernels against the best code of their peers for the same job.

    python bench/bench_kernels.py [--reps 41] [--arrays 200] [--mib 25]          # host kernels
    python bench/bench_kernels.py --gpu [--reps 41] [--arrays 100] [--mib 25]    # CUDA kernels

Host: the workload is a gradient bucket: --arrays float32 arrays of mixed sizes, --mib MiB in all.
Each case times pycoll and NumPy one call at a time, interleaved, --reps times, and reports
medians; "speedup" is NumPy's median over pycoll's (above 1: pycoll is faster). Results are checked
for equality before timing. Single-threaded on both sides.

GPU (--gpu, needs CuPy and a GPU; torch is compared too where it imports): the same bucket on the
device (default 100 arrays, 25 MiB) against one device-to-device copy of a buffer of the same
size (cudaMemcpyAsync through CuPy), reported as a percentage of its bandwidth; and 1000 arrays of
1-64 KiB against one CuPy copy per array, cupy.concatenate and torch.cat. Times are CUDA-event
medians of interleaved calls on one stream, two of them per call: "device", with the GPU kept busy
(a spin kernel) while the call is enqueued, so that only the GPU's time counts; and "end to end",
from an idle GPU, which adds the host's time to validate and enqueue.
"""

import argparse
import os
import platform
import statistics
import sys
import time

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


# --- GPU ------------------------------------------------------------------------------------

_SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
"""


class GpuTimer:
    """CUDA-event medians of interleaved calls on CuPy's current stream."""

    def __init__(self, cp, reps, warmup=5, spin_cycles=50_000_000):
        self.cp, self.reps, self.warmup = cp, reps, warmup
        self.stream = cp.cuda.get_current_stream()
        self.start, self.end = cp.cuda.Event(), cp.cuda.Event()
        self.spin_kernel = cp.RawKernel(_SPIN, "spin")
        self.spin_cycles = np.int64(spin_cycles)  # ~25 ms at 2 GHz: longer than any enqueueing

    def _once(self, fn, busy):
        if busy:  # the start event waits behind the spin, by then fn's work is enqueued
            self.spin_kernel((1,), (1,), (self.spin_cycles,))
        self.start.record(self.stream)
        fn()
        self.end.record(self.stream)
        self.end.synchronize()
        return self.cp.cuda.get_elapsed_time(self.start, self.end) * 1e-3

    def medians(self, sides, busy):
        """{name: median seconds} for sides {name: fn}, each rep in a rotated order."""
        names = list(sides)
        for _ in range(self.warmup):
            for name in names:
                sides[name]()
        times = {name: [] for name in names}
        for r in range(self.reps):
            for k in range(len(names)):
                name = names[(r + k) % len(names)]
                times[name].append(self._once(sides[name], busy))
        return {name: statistics.median(t) for name, t in times.items()}


def small_arrays(count=1000, seed=1):
    """count float32 arrays of 1 to 64 KiB."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(int(n) // 4).astype(np.float32)
            for n in rng.integers(1024, 65536, count, endpoint=True)]


def gpu_comparisons(cp, bucket_arrays, small):
    """(title, {side: (fn, bytes it moves)}, check) for each comparison, pycoll's side first;
    check() tells whether every side's last result is right."""
    dev = [cp.asarray(a) for a in bucket_arrays]
    n = sum(a.size for a in dev)
    flat = cp.concatenate([a.ravel() for a in dev])
    out32, out16, copy_dst = (cp.empty(n, t) for t in (cp.float32, cp.float16, cp.float32))
    back = [cp.empty_like(a) for a in dev]
    scale = 1 / 3

    def memcpy():  # one device-to-device copy of the bucket's size: cudaMemcpyAsync
        copy_dst.data.copy_from_device_async(flat.data, flat.nbytes)

    def copied():
        return bool((copy_dst == flat).all())

    comparisons = [
        ("bucket: flatten",
         {"pycoll": (lambda: kernels.flatten(dev, out32), 8 * n), "memcpy": (memcpy, 8 * n)},
         lambda: copied() and bool((out32 == flat).all())),
        ("bucket: unflatten",
         {"pycoll": (lambda: kernels.unflatten(flat, back), 8 * n), "memcpy": (memcpy, 8 * n)},
         lambda: copied() and all(bool((b == a).all()) for a, b in zip(dev, back))),
        ("bucket: flatten scale, ->f16",
         {"pycoll": (lambda: kernels.flatten(dev, out16, scale=scale, dtype=np.float16), 6 * n),
          "memcpy": (memcpy, 8 * n)},
         lambda: copied() and bool((out16 == (flat * np.float32(scale)).astype(cp.float16)).all())),
    ]

    sdev = [cp.asarray(a) for a in small]
    offsets = np.concatenate([[0], np.cumsum([a.size for a in sdev])]).tolist()
    sflat = cp.concatenate(sdev)
    nbytes = 2 * sflat.nbytes
    outs = {}

    def out(side):
        outs[side] = cp.empty(sflat.size, cp.float32)
        return outs[side]

    def per_array_copyto(o=out("copyto")):
        for a, lo in zip(sdev, offsets):
            cp.copyto(o[lo : lo + a.size], a)

    def per_array_memcpy(o=out("memcpy")):
        for a, lo in zip(sdev, offsets):
            (o.data + 4 * lo).copy_from_device_async(a.data, a.nbytes)

    sides = {
        "pycoll": (lambda o=out("pycoll"): kernels.flatten(sdev, o), nbytes),
        "copyto": (per_array_copyto, nbytes),
        "memcpy": (per_array_memcpy, nbytes),
        "concatenate": (lambda o=out("concatenate"): cp.concatenate(sdev, out=o), nbytes),
    }
    torch = _torch_with_cuda()
    if torch is not None:
        tsrc = [torch.from_dlpack(a) for a in sdev]
        tout = torch.from_dlpack(out("torch.cat"))
        sides["torch.cat"] = (lambda: torch.cat(tsrc, out=tout), nbytes)
    comparisons.append((
        f"{len(sdev)} arrays of 1-64 KiB: flatten", sides,
        lambda: all(bool((o == sflat).all()) for o in outs.values()),
    ))
    return comparisons


def _torch_with_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def gpu_main(args, argv):
    import cupy as cp

    arrays = bucket(args.arrays or 100, args.mib)
    info = kernels.build_info()
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"command: python bench/bench_kernels.py {' '.join(argv or sys.argv[1:])}".rstrip())
    print(f"device:  {name}; cupy {cp.__version__}; pycoll._C " + ", ".join(
        f"{k} {info[k]}" for k in ("cuda_kernels", "nvcc", "cuda_arch") if k in info))
    if not info["cuda_kernels"]:
        print("         (a build without CUDA kernels: pycoll's side is its CuPy fallback)")
    print(
        f"bucket:  {len(arrays)} float32 arrays, {sum(a.nbytes for a in arrays) / 2**20:.1f} MiB, "
        f"sizes {min(a.size for a in arrays)}..{max(a.size for a in arrays)}; "
        f"median of {args.reps} interleaved calls, CUDA events\n"
    )
    timer = GpuTimer(cp, args.reps)
    head = (f"{'case':<36} {'side':<12} {'device us':>10} {'e2e us':>10} {'GB/s':>7} "
            f"{'speedup dev':>12} {'speedup e2e':>12}")
    print(head)
    print("-" * len(head))
    for title, sides, check in gpu_comparisons(cp, arrays, small_arrays()):
        fns = {side: fn for side, (fn, _) in sides.items()}
        for fn in fns.values():
            fn()
        cp.cuda.get_current_stream().synchronize()
        if not check():
            raise SystemExit(f"bench_kernels: {title}: a side's result is wrong")
        device = timer.medians(fns, busy=True)
        e2e = timer.medians(fns, busy=False)
        gbs = {side: moved / device[side] / 1e9 for side, (_, moved) in sides.items()}
        for side in sides:
            speedups = ("", "") if side == "pycoll" else (
                f"{device[side] / device['pycoll']:.2f}x", f"{e2e[side] / e2e['pycoll']:.2f}x")
            print(f"{title:<36} {side:<12} {device[side] * 1e6:10.1f} {e2e[side] * 1e6:10.1f} "
                  f"{gbs[side]:7.0f} {speedups[0]:>12} {speedups[1]:>12}")
        if title.startswith("bucket"):
            print(f"{'':<36} pycoll at {100 * gbs['pycoll'] / gbs['memcpy']:.0f} % of memcpy's "
                  "bandwidth (device time, bytes read + written)")
        print()
    print(
        "speedup: the side's median time over pycoll's (above 1: pycoll is faster). device: the"
        "\nGPU's time alone; e2e: from an idle GPU, with the host's time to check and enqueue."
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpu", action="store_true", help="time the CUDA kernels (needs CuPy, a GPU)")
    p.add_argument("--reps", type=int, default=41, help="timed calls per case and side")
    p.add_argument("--arrays", type=int, default=None,
                   help="arrays in the bucket (default 200; 100 with --gpu)")
    p.add_argument("--mib", type=int, default=25, help="bucket size in MiB (float32)")
    args = p.parse_args(argv)
    if args.gpu:
        gpu_main(args, argv)
        return

    arrays = bucket(args.arrays or 200, args.mib)
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


if __name__ == "__main__":
    main()
