"""What a rank of a documentation example printed, with each framework's own noise removed, so
that pycoll's output and Paddle's compare line for line (used by record.py and
tests/test_paddle_docs.py)."""
import re
from pathlib import Path

# Paddle's start-up chatter (glog lines, the modified-flags banner, warnings) and pycoll's log lines
_NOISE = re.compile(r"^([IWEF]\d{4} \d\d:\d\d:\d\d|=+|FLAGS\(name=|\s*warnings\.warn\(|.*Warning: |pycoll: |\[rank \d+\] "
                    r"|\[\d{4}-\d\d-\d\d [\d:,]+\] \[ *(DEBUG|INFO|WARNING)\]"  # paddle's fleet logger
                    r"|\[[\d.]+\] \[\S+ *:\d+ *:\d+\] +\S+\.c:\d+ +UCX +WARN )")  # the MPI library's transport
RANKS = {"new_group": 8, "get_group": 8,  # Paddle's examples name ranks 2, 4, 6: 8 ranks
         "ProcessMesh": 6, "shard_tensor": 6, "Shard": 6,  # a mesh of ranks 0..5
         "shard_dataloader": 8}  # two meshes of 4
# the dataset examples read a.txt and b.txt (paddle's doctests skip them: "No files to read");
# MultiSlot lines for their four int64 slots
INPUTS = {"a.txt": "1 11 1 12 2 13 14 1 15\n1 21 1 22 1 23 1 24\n2 31 32 1 33 1 34 1 35\n",
          "b.txt": "1 41 1 42 1 43 1 44\n1 51 2 52 53 1 54 1 55\n"}


# examples that print random numbers (unseeded, or from paddle's own generator): compared with
# every number masked
RANDOM = {"DataLoader_0", "distributed_model_0", "random_split_0"}


def masked(text: str) -> str:
    return re.sub(r"-?\d+(\.\d*)?(e[-+]?\d+)?", "<number>", text)


def ranks_for(example: str) -> int:
    return RANKS.get(example, 2)


def write_inputs(source: str, folder: Path) -> None:
    """The input files ``source`` (an example's text) names, into ``folder``."""
    for name, text in INPUTS.items():
        if f"'{name}'" in source or f'"{name}"' in source:
            (folder / name).write_text(text)


def printed(log: str) -> str:
    """The lines a rank printed, in a form both frameworks share (paddle's ``Place(cpu)`` is
    pycoll's ``cpu``)."""
    kept = [line.rstrip() for line in log.splitlines() if line.strip() and not _NOISE.match(line)]
    return "\n".join(kept).replace("Place(cpu)", "cpu") + "\n"
