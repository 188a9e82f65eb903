"""pycoll's side of bench/dataset_shuffle.py, on the ranks of ``python -m pycoll.launch``:

    python -m pycoll.launch --nproc_per_node 2 bench/dataset_shuffle_pycoll.py DATA OUT [--thread-num 1]

Each rank loads its share of DATA/part-*.txt (every world-th file from its rank on) into an
``InMemoryDataset`` of 3 slots, then shuffles it locally and globally; each step is timed
between barriers (this rank's time; the driver takes the slowest rank's). The rank writes
OUT/pycoll-rank<N>.json: the times, the record counts (this rank's and, summed over the ranks
by the dataset, everyone's), and RSS: the peak before loading and after each step (MiB, from
``getrusage``'s ``ru_maxrss``).
"""
import argparse
import glob
import json
import os

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import fleet
from rank_clock import peak_mib, timed
from pycoll.distributed.dataset import Slot



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--thread-num", type=int, default=1)
    args = parser.parse_args()
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    pycoll.seed(1234 + rank)
    files = sorted(glob.glob(os.path.join(args.data, "part-*.txt")))[rank::world]
    data = dist.InMemoryDataset()
    data.init(batch_size=32, thread_num=args.thread_num, pipe_command="cat",
              use_var=[Slot("ids", "int64"), Slot("label", "int64"), Slot("dense", "float32")])
    data.set_filelist(files)
    report = {"framework": "pycoll", "rank": rank, "world": world, "files": len(files),
              "thread_num": args.thread_num, "rss_before_load_mib": peak_mib()}
    report["load_s"] = timed(data.load_into_memory, dist.barrier)
    report["rss_after_load_mib"] = peak_mib()
    report["loaded"] = data.get_memory_data_size()
    report["loaded_all"] = data.get_memory_data_size(fleet=True)
    report["local_shuffle_s"] = timed(data.local_shuffle, dist.barrier)
    report["global_shuffle_s"] = timed(lambda: data.global_shuffle(fleet), dist.barrier)
    report["shuffled"] = data.get_shuffle_data_size()
    report["shuffled_all"] = data.get_shuffle_data_size(fleet=True)
    report["rss_peak_mib"] = peak_mib()
    with open(os.path.join(args.out, f"pycoll-rank{rank}.json"), "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
