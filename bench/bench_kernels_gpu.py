"""The GPU half of bench/bench_kernels.py (``--gpu``): pycoll's CUDA kernels against CuPy's
device-to-device copy, per-array copies and torch.cat.

Two workloads. A gradient bucket (default 100 float32 arrays, 25 MiB): flatten and unflatten,
plain, scaled, and cast to float16 / bfloat16 (and back), each against one device-to-device copy
of a buffer of the same size (cudaMemcpyAsync through CuPy), as a percentage of its bandwidth
(bytes read + written). And 1000 arrays of 1-64 KiB flattened, against one CuPy copy per array
(copyto, memcpy), cupy.concatenate and torch.cat (where a CUDA torch imports).

Times are CUDA-event medians of interleaved calls on one stream, two per call: "device", with the
GPU kept busy (a spin kernel) while the call is enqueued, so that only the GPU's time counts;
and "end to end", from an idle GPU, which adds the host's time to validate and enqueue. Every
side's result is checked bit for bit first; a wrong one is reported (exit status 1) and the run
goes on.

Last, a probe of the kernels' table cache (csrc/cuda_kernels.cu keeps the last 64 lists' tables):
the host time to enqueue a flatten while the GPU is busy, when the list's table is kept and when
it must be built and uploaded. A rebuild that takes as long as the spin means the upload (from
pageable memory) waited for the stream: DataParallel's backward would then stall at each new list.
"""
import itertools
import json
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from pycoll import kernels

_SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
"""
SCALE = 1 / 3
KEPT_TABLES = 64  # Tables::kKeep in csrc/cuda_kernels.cu
# (title, {side: (fn, bytes it moves)}, check): pycoll's side first; check() tells whether the
# last results of every side are right
Case = Tuple[str, Dict[str, Tuple[Callable[[], Any], int]], Callable[[], bool]]


class GpuTimer:
    """CUDA-event medians of interleaved calls on CuPy's current stream."""

    def __init__(self, cp, reps, warmup=5, spin_cycles=50_000_000):
        self.cp, self.reps, self.warmup = cp, reps, warmup
        self.stream = cp.cuda.get_current_stream()
        self.start, self.end = cp.cuda.Event(), cp.cuda.Event()
        self.spin_kernel = cp.RawKernel(_SPIN, "spin")
        self.spin_cycles = np.int64(spin_cycles)  # ~25 ms at 2 GHz: longer than any enqueueing

    def spin(self):
        self.spin_kernel((1,), (1,), (self.spin_cycles,))

    def elapsed(self, fn, busy):
        """Device seconds of what fn() enqueues; ``busy`` hides the enqueueing behind a spin."""
        if busy:  # the start event waits behind the spin, by then fn's work is enqueued
            self.spin()
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
                times[name].append(self.elapsed(sides[name], busy))
        return {name: statistics.median(t) for name, t in times.items()}

    def host_median(self, fn):
        """Median host seconds that fn() takes to return while the GPU is busy."""
        times = []
        for _ in range(self.reps):
            self.spin()
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
            self.stream.synchronize()
        return statistics.median(times)


def bfloat16(cp: Any) -> Optional[np.dtype]:
    """ml_dtypes' bfloat16 where this CuPy makes arrays of it, else None."""
    try:
        import ml_dtypes

        cp.zeros(1, ml_dtypes.bfloat16)
        return np.dtype(ml_dtypes.bfloat16)
    except Exception:
        return None


def same_bits(got: Any, want: Any) -> bool:
    """Whether two contiguous CuPy arrays hold the same dtype, size and bytes."""
    return (got.dtype == want.dtype and got.size == want.size
            and bool((got.ravel().view(np.uint8) == want.ravel().view(np.uint8)).all()))


def bucket_cases(cp: Any, arrays: List[np.ndarray], bf16: Optional[np.dtype]) -> List[Case]:
    """The bucket's cases: flatten and unflatten, plain, scaled and cast, against a memcpy."""
    dev = [cp.asarray(a) for a in arrays]
    n = sum(a.size for a in dev)
    flat = cp.concatenate([a.ravel() for a in dev])
    scaled = flat * np.float32(SCALE)
    copy_dst = cp.empty_like(flat)
    back = [cp.empty_like(a) for a in dev]
    out32 = cp.empty(n, cp.float32)

    def memcpy():  # one device-to-device copy of the bucket's size: cudaMemcpyAsync
        copy_dst.data.copy_from_device_async(flat.data, flat.nbytes)

    def joined():
        return cp.concatenate([b.ravel() for b in back])

    def case(title, fn, nbytes, result, want):
        return (f"bucket: {title}", {"pycoll": (fn, nbytes), "memcpy": (memcpy, 8 * n)},
                lambda: same_bits(copy_dst, flat) and same_bits(result(), want))

    def casts(dtype):
        low = cp.empty(n, dtype)
        wire = flat.astype(dtype)  # a compressed bucket's buffer, as all_reduce leaves it
        return [
            case(f"flatten scale ->{dtype.name}",
                 lambda: kernels.flatten(dev, low, scale=SCALE, dtype=dtype), 6 * n,
                 lambda: low, scaled.astype(dtype)),
            case(f"unflatten {dtype.name}-> scale",
                 lambda: kernels.unflatten(wire, back, scale=SCALE), 6 * n,
                 joined, wire.astype(cp.float32) * np.float32(SCALE)),
        ]

    cases = [
        case("flatten", lambda: kernels.flatten(dev, out32), 8 * n, lambda: out32, flat),
        case("unflatten", lambda: kernels.unflatten(flat, back), 8 * n, joined, flat),
        case("unflatten scale", lambda: kernels.unflatten(flat, back, scale=SCALE), 8 * n,
             joined, scaled),
    ]
    for dtype in [np.dtype(np.float16)] + ([bf16] if bf16 is not None else []):
        cases += casts(dtype)
    return cases


def small_arrays(count: int = 1000, seed: int = 1) -> List[np.ndarray]:
    """count float32 arrays of 1 to 64 KiB."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(int(n) // 4).astype(np.float32)
            for n in rng.integers(1024, 65536, count, endpoint=True)]


def small_case(cp: Any, small: List[np.ndarray], torch: Any) -> Case:
    """The flatten of many small arrays, against a copy per array, concatenate and torch.cat."""
    sdev = [cp.asarray(a) for a in small]
    offsets = np.concatenate([[0], np.cumsum([a.size for a in sdev])]).tolist()
    sflat = cp.concatenate(sdev)
    nbytes = 2 * sflat.nbytes
    outs = {side: cp.empty(sflat.size, cp.float32)
            for side in ("pycoll", "copyto", "memcpy", "concatenate", "torch.cat")}

    def per_array_copyto():
        for a, lo in zip(sdev, offsets):
            cp.copyto(outs["copyto"][lo : lo + a.size], a)

    def per_array_memcpy():
        for a, lo in zip(sdev, offsets):
            (outs["memcpy"].data + 4 * lo).copy_from_device_async(a.data, a.nbytes)

    sides = {
        "pycoll": (lambda: kernels.flatten(sdev, outs["pycoll"]), nbytes),
        "copyto": (per_array_copyto, nbytes),
        "memcpy": (per_array_memcpy, nbytes),
        "concatenate": (lambda: cp.concatenate(sdev, out=outs["concatenate"]), nbytes),
    }
    if torch is None:
        del outs["torch.cat"]
    else:
        tsrc = [torch.from_dlpack(a) for a in sdev]
        tout = torch.from_dlpack(outs["torch.cat"])
        sides["torch.cat"] = (lambda: torch.cat(tsrc, out=tout), nbytes)
    return (f"{len(sdev)} arrays of 1-64 KiB: flatten", sides,
            lambda: all(same_bits(o, sflat) for o in outs.values()))


def _torch_with_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def table_probe(cp: Any, timer: GpuTimer, arrays: List[np.ndarray]) -> Dict[str, float]:
    """Host seconds to enqueue a flatten of a list like ``arrays`` while the GPU is busy: with
    its table kept ("kept_s") and rebuilt at every call ("rebuilt_s"); and the spin's seconds."""
    sizes = [a.size for a in arrays]
    base = cp.zeros(sum(sizes) + KEPT_TABLES, cp.float32)
    out = cp.empty(sum(sizes), cp.float32)
    bounds = np.cumsum([0] + sizes)

    def views(shift):  # a list at other addresses, hence with a table of its own
        return [base[lo + shift : hi + shift] for lo, hi in zip(bounds[:-1], bounds[1:])]

    lists = [views(k) for k in range(KEPT_TABLES + 1)]  # one more than are kept: each call misses
    turns = itertools.cycle(lists)

    def rebuilt():
        kernels.flatten(next(turns), out)

    for _ in lists:
        rebuilt()
    timer.stream.synchronize()
    return {"kept_s": timer.host_median(lambda: kernels.flatten(lists[0], out)),
            "rebuilt_s": timer.host_median(rebuilt),
            "spin_s": timer.elapsed(timer.spin, busy=False)}


def _device_line(cp, info):
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return name, f"{name}; cupy {cp.__version__}; pycoll._C " + ", ".join(
        f"{k} {info[k]}" for k in ("cuda_kernels", "nvcc", "cuda_arch") if k in info)


def _time_case(cp, timer, title, sides, check, rows):
    """Check, time and print one case; its rows are appended to ``rows``. False if wrong."""
    fns = {side: fn for side, (fn, _) in sides.items()}
    for fn in fns.values():
        fn()
    cp.cuda.get_current_stream().synchronize()
    if not check():
        print(f"{title:<36} WRONG: a side's result differs from the expected bits; not timed\n")
        return False
    device = timer.medians(fns, busy=True)
    e2e = timer.medians(fns, busy=False)
    gbs = {side: moved / device[side] / 1e9 for side, (_, moved) in sides.items()}
    for side in sides:
        row = {"case": title, "side": side, "device_s": device[side], "e2e_s": e2e[side],
               "gb_per_s": gbs[side]}
        speedups = ("", "")
        if side != "pycoll":
            row["speedup_device"] = device[side] / device["pycoll"]
            row["speedup_e2e"] = e2e[side] / e2e["pycoll"]
            speedups = (f"{row['speedup_device']:.2f}x", f"{row['speedup_e2e']:.2f}x")
        rows.append(row)
        print(f"{title:<36} {side:<12} {device[side] * 1e6:10.1f} {e2e[side] * 1e6:10.1f} "
              f"{gbs[side]:7.0f} {speedups[0]:>12} {speedups[1]:>12}")
    if title.startswith("bucket"):
        share = gbs["pycoll"] / gbs["memcpy"]
        rows[-len(sides)]["of_memcpy"] = share
        print(f"{'':<36} pycoll at {100 * share:.0f} % of memcpy's bandwidth "
              "(device time, bytes read + written)")
    print()
    return True


def run(args: Any, argv: Optional[List[str]], arrays: List[np.ndarray]) -> int:
    """The GPU benchmark (bench_kernels.py --gpu) on the bucket ``arrays``; its exit status."""
    import cupy as cp

    info = kernels.build_info()
    name, device_line = _device_line(cp, info)
    print(f"command: python bench/bench_kernels.py {' '.join(argv or sys.argv[1:])}".rstrip())
    print(f"device:  {device_line}")
    if not info["cuda_kernels"]:
        print("         (a build without CUDA kernels: pycoll's side is its CuPy fallback)")
    print(f"bucket:  {len(arrays)} float32 arrays, {sum(a.nbytes for a in arrays) / 2**20:.1f} MiB, "
          f"sizes {min(a.size for a in arrays)}..{max(a.size for a in arrays)}; "
          f"median of {args.reps} interleaved calls, CUDA events")
    bf16 = bfloat16(cp)
    if bf16 is None:
        print("         (bfloat16 cases left out: no ml_dtypes, or this CuPy has no bfloat16 arrays)")
    timer = GpuTimer(cp, args.reps)
    head = (f"\n{'case':<36} {'side':<12} {'device us':>10} {'e2e us':>10} {'GB/s':>7} "
            f"{'speedup dev':>12} {'speedup e2e':>12}")
    print(head)
    print("-" * len(head))
    rows, wrong = [], []
    cases = bucket_cases(cp, arrays, bf16) + [small_case(cp, small_arrays(), _torch_with_cuda())]
    for title, sides, check in cases:
        if not _time_case(cp, timer, title, sides, check, rows):
            wrong.append(title)
    probe = table_probe(cp, timer, arrays)
    print(f"table cache: host time to enqueue a flatten of {len(arrays)} arrays while the GPU is "
          f"busy: table kept {probe['kept_s'] * 1e6:.0f} us, rebuilt {probe['rebuilt_s'] * 1e6:.0f} us"
          f"\n             (the spin: {probe['spin_s'] * 1e3:.1f} ms; a rebuild that long waited "
          "for the stream)")
    print("\nspeedup: the side's median time over pycoll's (above 1: pycoll is faster). device: the"
          "\nGPU's time alone; e2e: from an idle GPU, with the host's time to check and enqueue.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "cupy": cp.__version__, "build": info, "reps": args.reps,
                       "rows": rows, "table_probe": probe, "wrong": wrong}, f, indent=1)
    return 1 if wrong else 0
