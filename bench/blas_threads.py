"""Small products beside a busy core: ``nn.Linear(256, 256)`` on [8, 256], forward, per call.

    python bench/blas_threads.py [--calls 2000] [--hogs N]

With ``--hogs N`` N more processes spin meanwhile (other jobs on the machine). Run it
as is (pycoll's default: paddle's one BLAS thread), with ``OPENBLAS_NUM_THREADS=2`` (NumPy's own
default on 2 cores), and with ``--paddle`` for paddle's time on the same machine.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--hogs", type=int, default=0)
    parser.add_argument("--paddle", action="store_true")
    args = parser.parse_args()
    if args.paddle:
        import paddle as lib
    else:
        import pycoll as lib
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    try:
        layer = lib.nn.Linear(256, 256)
        x = lib.to_tensor(np.random.default_rng(0).standard_normal((8, 256)).astype("float32"))
        times = []
        for _ in range(args.calls):
            start = time.perf_counter()
            layer(x)
            times.append(time.perf_counter() - start)
    finally:
        for hog in hogs:
            hog.kill()
    print(f"{'paddle' if args.paddle else 'pycoll'}: median {statistics.median(times) * 1e6:.1f} us, "
          f"mean {statistics.fmean(times) * 1e6:.1f} us, max {max(times) * 1e3:.2f} ms a call "
          f"({args.calls} calls, {args.hogs} spinning process(es) beside)")


if __name__ == "__main__":
    main()
