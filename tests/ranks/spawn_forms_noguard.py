"""spawn at a script's top level, without `if __name__ == "__main__":`: each new rank imports
the script to find ``job`` and meets the spawn call again; it must refuse, naming the fix."""
import pycoll.distributed as dist


def job():
    pass


try:
    dist.spawn(job, nprocs=2)
except dist.SpawnError as exc:
    print(f"parent caught SpawnError rank={exc.rank}:", exc, flush=True)
    raise SystemExit(9)
