"""What a rank of a documentation example printed, with each framework's own noise removed, so
that pycoll's output and Paddle's compare line for line (used by record.py and
tests/test_paddle_docs.py)."""
import re

# Paddle's start-up chatter (glog lines, the modified-flags banner, warnings) and pycoll's log lines
_NOISE = re.compile(r"^([IWEF]\d{4} \d\d:\d\d:\d\d|=+|FLAGS\(name=|\s*warnings\.warn\(|.*Warning: |pycoll: |\[rank \d+\] )")
RANKS = {"new_group": 8, "get_group": 8}  # Paddle's examples name ranks 2, 4, 6: 8 ranks


def ranks_for(example: str) -> int:
    return RANKS.get(example, 2)


def printed(log: str) -> str:
    """The lines a rank printed, in a form both frameworks share (paddle's ``Place(cpu)`` is
    pycoll's ``cpu``)."""
    kept = [line.rstrip() for line in log.splitlines() if line.strip() and not _NOISE.match(line)]
    return "\n".join(kept).replace("Place(cpu)", "cpu") + "\n"
