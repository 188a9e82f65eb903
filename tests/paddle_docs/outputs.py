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
         "shard_dataloader": 8,  # two meshes of 4
         "ProcessMesh_get_submesh_with_dim": 8}  # meshes of ranks 0..7
# the dataset examples read a.txt and b.txt (paddle's doctests skip them: "No files to read");
# MultiSlot lines for their four int64 slots
INPUTS = {"a.txt": "1 11 1 12 2 13 14 1 15\n1 21 1 22 1 23 1 24\n2 31 32 1 33 1 34 1 35\n",
          "b.txt": "1 41 1 42 1 43 1 44\n1 51 2 52 53 1 54 1 55\n"}


# examples that print random numbers (unseeded, or from paddle's own generator): compared with
# every number masked
RANDOM = {"DataLoader_0", "distributed_model_0", "random_split_0", "recompute_0",
          # and the two that print endpoints: the launchers pick free ports
          "ParallelEnv_current_endpoint_1", "ParallelEnv_trainer_endpoints_1"}


def masked(text: str) -> str:
    return re.sub(r"-?\d+(\.\d*)?(e[-+]?\d+)?", "<number>", text)


def ranks_for(example: str) -> int:
    return RANKS.get(example, 2)


def write_inputs(source: str, folder: Path) -> None:
    """The input files ``source`` (an example's text) names, into ``folder``."""
    for name, text in INPUTS.items():
        if f"'{name}'" in source or f'"{name}"' in source:
            (folder / name).write_text(text)


# a Python warning's first line ("file.py:12: UserWarning: ..."); the indented line after it is the
# source line it points at (paddle's own ``warnings.warn(``, or the example's line where pycoll
# warns with the caller's stacklevel)
_WARNING = re.compile(r"^\S.*:\d+: \w*Warning: ")
# paddle prints a dtype as ``paddle.float32``; pycoll's dtypes are NumPy's (``float32``)
_DTYPE = re.compile(r"\bpaddle\.(bfloat16|float16|float32|float64|u?int8|int16|int32|int64|bool|complex64|complex128)\b")


def printed(log: str) -> str:
    """The lines a rank printed, in a form both frameworks share (paddle's ``Place(cpu)`` is
    pycoll's ``cpu``, its ``paddle.float32`` pycoll's ``float32``)."""
    kept, after_warning = [], False
    for line in log.splitlines():
        source_line = after_warning and line.startswith(" ")
        after_warning = bool(_WARNING.match(line))
        if line.strip() and not source_line and not _NOISE.match(line):
            kept.append(line.rstrip())
    return _DTYPE.sub(r"\1", "\n".join(kept).replace("Place(cpu)", "cpu")) + "\n"
