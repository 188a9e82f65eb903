"""The rendezvous store's round trips per second, before and after its hardening, in one run.

    python bench/store_throughput.py [--rev HEAD] [--clients 1 8] [--rounds 7] [--ops 2000]

"before" is ``pycoll/distributed/store.py`` as it is at git revision ``--rev``, loaded from
``git show`` into a module of its own; "after" is the working tree's store, without a token and
with one (as under the launcher). Each round hosts a fresh store of each kind in turn, in this
process (rank 0's role), and the clients, separate processes (the other ranks), each run
``--ops`` set/get pairs of a 128-byte value (an NCCL id's size) on keys of their own, all at once.
A round's rate is every client's round trips over the slowest client's time; the table gives
each kind's median over the rounds and its ratio to "before".
"""
import argparse
import multiprocessing as mp
import os
import platform
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
TOKEN = "bench-token-0123456789abcdef"
VALUE = bytes(range(128))


def load_store_at(rev: str) -> types.ModuleType:
    """``pycoll.distributed.store`` as it was at ``rev``, as a module of its own."""
    source = subprocess.run(["git", "show", f"{rev}:pycoll/distributed/store.py"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout
    module = types.ModuleType(f"store_at_{rev}")
    exec(compile(source, f"{rev}:pycoll/distributed/store.py", "exec"), module.__dict__)
    return module


def store_classes(rev: str) -> dict:
    from pycoll.distributed import store

    return {"before": (load_store_at(rev).TCPStore, {}), "after": (store.TCPStore, {}),
            "after, token": (store.TCPStore, {"token": TOKEN})}


def client(rev: str, me: int, jobs, results, start) -> None:
    """A client process: for each job ``(kind, port, ops)``, time ``ops`` set/get pairs."""
    kinds = store_classes(rev)
    for kind, port, ops in iter(jobs.get, None):
        cls, kwargs = kinds[kind]
        with cls(HOST, port, timeout=60, **kwargs) as store:
            key = f"client{me}"
            store.set(key, VALUE)
            start.wait()
            begin = time.perf_counter()
            for _ in range(ops):
                store.set(key, VALUE)
                store.get(key)
            results.put(time.perf_counter() - begin)


def round_trips_per_s(kind: str, classes: dict, nclients: int, ops: int, workers) -> float:
    cls, kwargs = classes[kind]
    jobs, results, start = workers
    with cls(HOST, 0, is_master=True, timeout=60, **kwargs) as master:
        for _ in range(nclients):
            jobs.put((kind, master.port, ops))
        slowest = max(results.get(timeout=300) for _ in range(nclients))
    return 2 * ops * nclients / slowest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="the git revision of the 'before' store")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=2000)
    args = parser.parse_args()
    classes = store_classes(args.rev)
    context = mp.get_context("spawn")
    print(f"# {os.cpu_count()} CPUs (nproc), Python {platform.python_version()}, before = "
          f"{args.rev}; median of {args.rounds} rounds, {args.ops} set/get pairs per client")
    print("| clients | " + " | ".join(f"{kind} (round trips/s)" for kind in classes)
          + " | after / before | after, token / before |")
    print("|---:|" + "---:|" * (len(classes) + 2))
    for nclients in args.clients:
        jobs, results = context.Queue(), context.Queue()
        start = context.Barrier(nclients)
        procs = [context.Process(target=client, args=(args.rev, i, jobs, results, start))
                 for i in range(nclients)]
        for p in procs:
            p.start()
        rates = {kind: [] for kind in classes}
        for _ in range(args.rounds):
            for kind in rates:  # alternated, so that the machine's noise hits each alike
                rates[kind].append(round_trips_per_s(kind, classes, nclients, args.ops,
                                                     (jobs, results, start)))
        for _ in procs:
            jobs.put(None)
        for p in procs:
            p.join(60)
        median = {kind: statistics.median(r) for kind, r in rates.items()}
        print(f"| {nclients} | " + " | ".join(f"{median[k]:,.0f}" for k in classes)
              + f" | {median['after'] / median['before']:.3f}"
              + f" | {median['after, token'] / median['before']:.3f} |", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
