"""Record what Paddle prints for each example here (the expected output of
tests/test_paddle_docs.py). Each example is a Paddle 3.3.1 docstring example with ``paddle``
replaced by ``pycoll``; this turns it back and runs it under Paddle's launcher.

    python tests/paddle_docs/record.py --paddle-python /path/to/paddle-venv/bin/python [NAME ...]

(only the examples NAME..., e.g. ``send_object_list_0``, when names are given).

An example Paddle's CPU build cannot run (it has no alltoall, no GPU here) gets no expected
output: its test then checks that it runs, not what it prints.
"""
import argparse
import re
import subprocess
import tempfile
from pathlib import Path

from outputs import printed, ranks_for, write_inputs

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paddle-python", required=True)
    parser.add_argument("names", nargs="*", help="only these examples (default: all)")
    args = parser.parse_args()
    for example in sorted(HERE.glob("*_[0-9].py")):
        name = example.stem
        if args.names and name not in args.names:
            continue
        for old in HERE.glob(f"expected/{name}.rank*.txt"):
            old.unlink()
        with tempfile.TemporaryDirectory() as work:
            script = Path(work) / example.name
            script.write_text(re.sub(r"\bpycoll\b", "paddle", example.read_text()))
            write_inputs(example.read_text(), Path(work))
            ranks = ranks_for(name.rsplit("_", 1)[0])
            try:
                status = subprocess.run([args.paddle_python, "-m", "paddle.distributed.launch", "--nproc_per_node",
                                         str(ranks), script.name], cwd=work, capture_output=True,
                                        timeout=120, start_new_session=True).returncode
            except subprocess.TimeoutExpired:
                status = "a hang: stopped after 120 s"
            if status != 0:
                print(f"{name}: Paddle's CPU build cannot run it ({status})", flush=True)
                continue
            (HERE / "expected").mkdir(exist_ok=True)
            for rank in range(ranks):
                log = (Path(work) / "log" / f"workerlog.{rank}").read_text(errors="replace")
                (HERE / "expected" / f"{name}.rank{rank}.txt").write_text(printed(log))
            print(f"{name}: recorded", flush=True)


if __name__ == "__main__":
    main()
