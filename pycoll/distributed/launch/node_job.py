"""This launcher's part in a job of several machines (``--nnodes``; the meeting itself is
:mod:`pycoll.distributed.nodes`): node 0's launcher starts every rank through MPI's launcher,
the others follow until the job ends.

Logs, as paddle keeps them: each launcher's ``--log_dir`` is its own machine's, and each rank
writes ``workerlog.RANK`` into the folder of the machine it runs on (the launchers tell node 0
their folders through the meeting's store, and node 0 passes the list to the ranks, ``_entry``).
A failure is shown where it happened: the failed rank's machine shows the end of its log
(``main``), and that machine's launcher also hands that end to node 0's, which shows it too and
names the log it came from.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Callable, Dict, List, Tuple

from pycoll._errors import CollectiveError
from pycoll.distributed import _mpiexec, nodes
from pycoll.distributed._entry import NODE_LOG_DIRS_VAR
from pycoll.distributed.launch.logs import STOPPING_MARK, failed_ends
from pycoll.distributed.placement import timeout_seconds

_RELAY_PERIOD_S = 0.2  # how often another node's launcher looks for a failure in its ranks' logs
_REPORT_WAIT_S = 1.0  # how long node 0 waits, after a failed job, for the others' reports


def meeting_point(args: argparse.Namespace) -> str:
    """Node 0's meeting point as the user gave it (an option, or paddle's variable)."""
    if args.from_environment.get("--master"):
        return f"{args.from_environment['--master']}={args.master}"
    if args.master is not None:
        return f"--master {args.master}"
    return f"--master_addr {args.master_addr} --master_port {args.master_port}"


def in_launcher_terms(message: str, given: str) -> str:
    """The rendezvous store's ``message`` in the launcher's terms: its MASTER_ADDR:MASTER_PORT is
    the meeting point the user ``given``, and its rank 0 is node 0's launcher."""
    for store_words, launcher_words in (
            ("the rendezvous store at MASTER_ADDR:MASTER_PORT = ",
             f"the rendezvous store of node 0's launcher ({given}) at "),
            ("is rank 0 running, and do MASTER_ADDR and MASTER_PORT name its host and a free port?",
             f"is node 0's launcher running, and does {given} name its address and a free port?"),
            ("another job may be using MASTER_PORT, or MASTER_ADDR is not an address of this host",
             f"another job may be using the port of {given}, or its address is not this machine's")):
        message = message.replace(store_words, launcher_words)
    return message


def _stopped_in(path: str, offset: int) -> Tuple[bool, int]:
    """Whether what ``path`` holds past ``offset`` (and the few bytes before it, where the mark
    may have been cut) tells that a rank stopped the job; and where the file ends now."""
    mark = STOPPING_MARK.encode()
    try:
        with open(path, "rb") as f:
            f.seek(max(0, offset - len(mark)))
            data = f.read()
            return mark in data, f.tell()
    except OSError:  # not made yet: the rank has not started
        return False, offset


def _relay_failures(meeting: nodes.Meeting, node: int, logs: Dict[str, int]) -> threading.Event:
    """Another node, while the job runs: hand node 0 the end of the first of this machine's rank
    logs where a rank stopped the job (each log read once, as it grows). Set the returned event
    to end it."""
    done = threading.Event()
    offsets = dict(logs)

    def run() -> None:
        while not done.wait(_RELAY_PERIOD_S):
            for path in sorted(offsets):
                stopped, offsets[path] = _stopped_in(path, offsets[path])
                if stopped:
                    text = failed_ends({path: logs[path]}, marks=(STOPPING_MARK,)).get(path, "")
                    try:
                        meeting.store.set(f"node/{node}/failure", json.dumps({"log": path, "end": text}).encode())
                    except (CollectiveError, OSError):  # the job is over and node 0's store gone
                        pass
                    return

    threading.Thread(target=run, name="pycoll-failure-relay", daemon=True).start()
    return done


def _show_other_nodes_failures(args: argparse.Namespace, meeting: nodes.Meeting, hosts: List[str],
                               log_dirs: List[str], status: int) -> None:
    """Node 0, after a failed job: the end of a failed rank's log that another machine handed
    over, else where the other machines' ranks wrote their logs."""
    deadline = time.monotonic() + _REPORT_WAIT_S
    for node in range(1, args.nnodes):
        if not log_dirs[node]:  # its ranks' output came to this terminal
            continue
        try:
            said = json.loads(meeting.store.get(f"node/{node}/failure", max(0.0, deadline - time.monotonic())))
        except CollectiveError:
            said = None
        if said is not None:
            sys.stderr.write(f"pycoll.launch: the job failed on node {node} ({hosts[node]}); the end of "
                             f"{said['log']} there:\n{said['end']}\n")
            continue
        first, last = node * args.nproc_per_node, (node + 1) * args.nproc_per_node - 1
        logs = (f"the log of node {node}'s rank {first} is {log_dirs[node]}/workerlog.{first}" if first == last
                else f"the logs of node {node}'s ranks {first}-{last} are {log_dirs[node]}/workerlog.{first}-{last}")
        sys.stderr.write(f"pycoll.launch: the job failed (exit status {status}); {logs} on {hosts[node]}\n")


def _addresses_across_machines(env: Dict[str, str], hosts: List[str], per_node: int) -> None:
    """The ranks' addresses in a job of several machines: the meeting point (``MASTER_ADDR``,
    ``PADDLE_MASTER``) is node 0's address, unless the user set ``MASTER_ADDR``, and each of
    paddle's ``PADDLE_TRAINER_ENDPOINTS`` names its rank's machine (job_environment names this
    machine's loopback, right for one machine only: another machine's rank would meet itself)."""
    if "MASTER_ADDR" not in os.environ:
        env["MASTER_ADDR"] = hosts[0]
    env["PADDLE_MASTER"] = f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}"
    ports = [endpoint.rsplit(":", 1)[1] for endpoint in env["PADDLE_TRAINER_ENDPOINTS"].split(",")]
    env["PADDLE_TRAINER_ENDPOINTS"] = ",".join(f"{hosts[rank // per_node]}:{port}" for rank, port in enumerate(ports))


def run_nodes(args: argparse.Namespace, env: Dict[str, str], logs: Dict[str, int],
              run_job: Callable[..., int]) -> int:
    """This machine's part in a job of ``args.nnodes`` machines; ``logs``: this machine's rank
    logs (``prepare_logs``); ``run_job(command, env, watch)`` runs MPI's launcher (node 0)."""
    timeout = timeout_seconds(None)
    sys.stderr.write(f"pycoll.launch: node {args.node_rank} of {args.nnodes} meets the others' launchers at "
                     f"{args.master_addr}:{args.master_port} (waiting up to {timeout:g} s, PYCOLL_TIMEOUT)\n")
    try:
        meeting = nodes.Meeting(args.nnodes, args.node_rank, args.master_addr, args.master_port,
                                args.nproc_per_node, timeout)
    except (CollectiveError, ValueError) as exc:
        sys.stderr.write(f"pycoll.launch: node {args.node_rank}: {in_launcher_terms(str(exc), meeting_point(args))}\n")
        return 1
    meeting.store.set(f"node/{args.node_rank}/log_dir", (args.log_dir or "").encode())
    if args.node_rank:
        shown = (f"its ranks write {args.log_dir}/workerlog.RANK here" if args.log_dir
                 else "node 0's launcher shows its ranks' output")
        sys.stderr.write(f"pycoll.launch: node {args.node_rank} joined the job at {meeting.where}; {shown}\n")
        relay = _relay_failures(meeting, args.node_rank, logs) if logs else threading.Event()
        try:
            return meeting.follow()
        finally:
            relay.set()
    try:
        hosts = meeting.hosts()
        log_dirs = [meeting.store.get(f"node/{rank}/log_dir").decode() for rank in range(args.nnodes)]
    except CollectiveError as exc:
        meeting.finish(1, str(exc))
        sys.stderr.write(f"pycoll.launch: {exc}\n")
        return 1
    stopped: List[str] = []
    watching: List[threading.Event] = []

    def watch(stop_job: Callable[[], None]) -> None:
        """Once the job runs: stop it, saying why, if another machine's launcher falls silent."""
        def stop(reason: str) -> None:
            stopped.append(reason)
            sys.stderr.write(f"pycoll.launch: {reason}\n")
            stop_job()

        watching.append(meeting.watch(stop))

    command = _mpiexec.rank_command(args.nproc_per_node * args.nnodes, args.rank_argv,
                                    nodes.job_hosts(hosts, args.nproc_per_node))
    _addresses_across_machines(env, hosts, args.nproc_per_node)
    env[NODE_LOG_DIRS_VAR] = json.dumps({"per_node": args.nproc_per_node, "dirs": log_dirs})
    status = run_job(command, env, watch)
    for done in watching:
        done.set()
    status = status or (1 if stopped else 0)
    if status:
        _show_other_nodes_failures(args, meeting, hosts, log_dirs, status)
    meeting.finish(status, stopped[0] if stopped else "")
    return status
