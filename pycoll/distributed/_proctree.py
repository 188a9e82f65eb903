"""Stopping a process and everything it started, without a word from any of them.

``spawn(daemon=True)`` stops its job when the parent exits (paddle's daemon processes end with
their parent, silently). Asking MPI's launcher (Ctrl-C, SIGTERM) makes it and the ranks report a
failure; freezing the launcher first and killing what it started does not. Linux only (``/proc``).
"""
from __future__ import annotations

import os
import signal
import subprocess
from typing import Dict, List

_ROUNDS = 5  # passes that freeze children started while the tree was being frozen


def available() -> bool:
    """Whether process trees can be read here."""
    return os.path.isdir("/proc/self/task")


def _children() -> Dict[int, List[int]]:
    """Every process's children, by parent pid."""
    found: Dict[int, List[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the name, in parentheses, may hold spaces
        found.setdefault(parent, []).append(int(entry))
    return found


def descendants(pid: int) -> List[int]:
    """The processes ``pid`` started, and theirs, parents first."""
    children, found, todo = _children(), [], [pid]
    while todo:
        for child in children.get(todo.pop(0), []):
            found.append(child)
            todo.append(child)
    return found


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:  # gone already
        pass


def kill_quietly(process: subprocess.Popen) -> None:
    """Freeze ``process`` and every process below it (so none can notice the others end and
    report it), kill them all, and reap ``process``."""
    if process.poll() is not None:
        return
    _signal(process.pid, signal.SIGSTOP)
    frozen: List[int] = []
    for _ in range(_ROUNDS):
        fresh = [pid for pid in descendants(process.pid) if pid not in frozen]
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
        frozen += fresh
    for pid in frozen:
        _signal(pid, signal.SIGKILL)
    process.kill()
    process.wait()
