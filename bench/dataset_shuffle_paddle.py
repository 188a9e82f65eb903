"""Paddle's side of bench/dataset_shuffle.py, on the ranks of ``python -m
paddle.distributed.launch`` (Paddle 3.3.1, CPU build):

    python -m paddle.distributed.launch --nproc_per_node 2 bench/dataset_shuffle_paddle.py DATA OUT \\
        [--thread-num 1] [--global-shuffle]

The same steps as bench/dataset_shuffle_pycoll.py on ``paddle.distributed.InMemoryDataset``:
its slots are static variables (``paddle.static.data(..., lod_level=1)``, made under
``paddle.enable_static()``; the dataset only reads their names, dtypes and lod levels), and the
rest runs in dynamic mode, where ``init_parallel_env`` gives the barriers (gloo). Each rank
writes OUT/paddle-rank<N>.json.

On the CPU wheel Paddle's ``global_shuffle`` does not run (this script's ``--global-shuffle``
tries it and records what fails in OUT/paddle-global-shuffle-rank<N>.json before the call that
aborts): with ``fleet`` (after ``fleet.init(is_collective=True)``) it calls the role maker's
``barrier_worker``, which no role maker of Paddle 3.3.1 has (AttributeError), and the sizes
with ``fleet`` call ``all_reduce_worker`` (same); without ``fleet`` the C++ shuffle sends its
records through FleetWrapper's client-to-client messages, which exist only in pslib builds, and
the process aborts (``std::future_error: No associated state``). So the Paddle column has the
load and the local shuffle, and the counts summed here by ``all_reduce`` (after the local
shuffle, ``get_memory_data_size``: ``get_shuffle_data_size`` stays 0 until a global shuffle).
"""
import argparse
import glob
import json
import os
import traceback

import numpy as np
import paddle
import paddle.distributed as dist
from rank_clock import peak_mib, timed



def total(count: int) -> int:
    t = paddle.to_tensor(np.array([count], np.int64))
    dist.all_reduce(t)
    return int(t.numpy()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--thread-num", type=int, default=1)
    parser.add_argument("--global-shuffle", action="store_true",
                        help="try Paddle's global_shuffle (with fleet, then without) and record the failure")
    args = parser.parse_args()
    paddle.enable_static()
    slots = [paddle.static.data(name=name, shape=[None, 1], dtype=dtype, lod_level=1)
             for name, dtype in (("ids", "int64"), ("label", "int64"), ("dense", "float32"))]
    paddle.disable_static()
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    files = sorted(glob.glob(os.path.join(args.data, "part-*.txt")))[rank::world]
    data = paddle.distributed.InMemoryDataset()
    data.init(batch_size=32, thread_num=args.thread_num, pipe_command="cat", use_var=slots)
    data.set_filelist(files)
    report = {"framework": "paddle", "rank": rank, "world": world, "files": len(files),
              "thread_num": args.thread_num, "rss_before_load_mib": peak_mib()}
    report["load_s"] = timed(data.load_into_memory, dist.barrier)
    report["rss_after_load_mib"] = peak_mib()
    report["loaded"] = int(data.get_memory_data_size())
    report["loaded_all"] = total(report["loaded"])
    report["local_shuffle_s"] = timed(data.local_shuffle, dist.barrier)
    report["shuffled"] = int(data.get_memory_data_size())  # get_shuffle_data_size() is 0 after a local shuffle
    report["get_shuffle_data_size"] = int(data.get_shuffle_data_size())
    report["shuffled_all"] = total(report["shuffled"])
    report["rss_peak_mib"] = peak_mib()
    with open(os.path.join(args.out, f"paddle-rank{rank}.json"), "w") as f:
        json.dump(report, f)
    if args.global_shuffle:
        from paddle.distributed import fleet
        fleet.init(is_collective=True)
        failures = {}
        for name, call in (("global_shuffle(fleet)", lambda: data.global_shuffle(fleet.fleet)),
                           ("get_memory_data_size(fleet)", lambda: data.get_memory_data_size(fleet.fleet))):
            try:
                call()
                failures[name] = "ran"
            except Exception as exc:  # what Paddle raises, recorded for the driver
                failures[name] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
        failures["global_shuffle()"] = "aborted the process (see log/workerlog.N)"
        with open(os.path.join(args.out, f"paddle-global-shuffle-rank{rank}.json"), "w") as f:
            json.dump(failures, f)
        dist.barrier()
        data.global_shuffle()  # aborts on the CPU wheel; if it ever runs, say so
        failures["global_shuffle()"] = f"ran: {data.get_shuffle_data_size()} records here"
        with open(os.path.join(args.out, f"paddle-global-shuffle-rank{rank}.json"), "w") as f:
            json.dump(failures, f)


if __name__ == "__main__":
    main()
