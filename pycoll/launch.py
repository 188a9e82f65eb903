"""``python -m pycoll.launch``: start a training script on several ranks through MPI's launcher.

    python -m pycoll.launch --nproc_per_node 2 train.py --lr 0.1
    python -m pycoll.launch --gpus 0,1 train.py          # one rank per listed GPU
    python -m pycoll.launch --nnodes 2 --node_rank 0 --master_addr 10.0.0.1 --master_port 29500 \\
        --nproc_per_node 4 train.py                      # on each machine, its own --node_rank

``python -m pycoll.distributed.launch`` is the same launcher under paddle's module name, and
paddle's spellings of the options are accepted (``--devices``, ``--selected_gpus``, ``--ips``,
``--master ip:port``, ``--rank``, ``--host``, ``--start_port``, ``--log_overwrite``,
``--log_level``; ``--job_id``, ``--run_mode collective``, ``--max_restart`` and ``--legacy`` are
accepted and change nothing). Options are never abbreviated: ``--host`` is not ``--hostfile``.
As paddle's, the launcher also takes its options from paddle's variables (``PADDLE_NPROC_PER_NODE``,
``PADDLE_MASTER``, ``PADDLE_LOG_DIR``, ...: ``launch.env_options``), over the command line.

Each rank runs the script as ``__main__``. When one rank fails, its traceback is printed and
the whole job stops within seconds; the exit status is the failing rank's, and a rank killed by
a signal is named (``_jobdir``). With ``--nnodes`` the launchers of the machines meet at the
master and node 0's starts the whole job (:mod:`pycoll.distributed.nodes`,
``launch.node_job``); each machine's ranks write their logs into that machine's ``--log_dir``.
"""
from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import signal
import sys
import tempfile
from typing import Callable, Dict, List, Optional, Tuple

from pycoll._logging import logger
from pycoll.distributed import _jobdir, _mpiexec, job_leftovers, nodes
from pycoll.distributed._entry import INTERRUPTED, LOG_DIR_VAR
from pycoll.distributed._end_order import EndOrder
from pycoll.distributed.launch.env_options import IGNORED_OPTIONS, noting_parser, parse_with_environment
from pycoll.distributed.launch.logs import LogFollower, prepare_logs, show_failed_logs
from pycoll.distributed.launch.node_job import run_nodes
from pycoll.distributed.placement import paddle_backend_variable, selected_gpus

# the level names logging (and so paddle's --log_level) takes; pycoll's names for its aliases
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL")
_LEVEL_ALIASES = {"WARN": "WARNING", "FATAL": "CRITICAL"}
_TRUE, _FALSE = ("1", "true", "t", "yes", "y", "on"), ("0", "false", "f", "no", "n", "off")


def _switch(value: str) -> bool:
    """paddle's yes/no option values (``--log_overwrite True``, ``--legacy 0``)."""
    if value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise argparse.ArgumentTypeError(f"{value!r}: give true or false (1/0, yes/no)")


def _parser(cls: type = argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = cls(
        prog="python -m pycoll.launch", allow_abbrev=False,
        description="Start SCRIPT on several ranks (MPI processes) of this machine, or of several "
                    "machines with --nnodes.")
    p.add_argument("--nproc_per_node", "--nprocs", type=int, default=None,
                   help="ranks to start on this machine (default: the number of --gpus, else 1)")
    p.add_argument("--gpus", "--devices", "--selected_gpus", dest="gpus", default=None,
                   help="comma-separated GPU ids to use (sets CUDA_VISIBLE_DEVICES, one rank each, and "
                        "each rank's FLAGS_selected_gpus)")
    p.add_argument("--nnodes", type=int, default=None,
                   help="machines in the job, one launcher each (default 1; --ips gives its own)")
    p.add_argument("--node_rank", "--rank", type=int, default=None,
                   help="this machine's place among them (0 hosts the meeting; paddle's -1: not given)")
    p.add_argument("--master_addr", default=None, help="node 0's address (default 127.0.0.1; --ips: the first)")
    p.add_argument("--master_port", type=int, default=None, help="a free TCP port on node 0 for the launchers' meeting")
    p.add_argument("--master", default=None, help="paddle's spelling: --master_addr and --master_port as IP:PORT")
    p.add_argument("--ips", default=None, help="paddle's spelling: the machines' addresses, node 0's first")
    p.add_argument("--host", default=None,
                   help="this machine's address among --ips (default: the one on the route to the master)")
    p.add_argument("--hostfile", default=None,
                   help="a host list for MPI's launcher (one host per line, `host:slots` allowed): "
                        "this one launcher starts the ranks on those machines over ssh")
    p.add_argument("--start_port", type=int, default=None,
                   help="the ranks' PADDLE_TRAINER_ENDPOINTS are HOST:START_PORT, HOST:START_PORT+1, ... on "
                        "each machine (default: free ports)")
    p.add_argument("--log_dir", default=None,
                   help="write each rank's output to LOG_DIR/workerlog.RANK (paddle's), after what earlier "
                        "jobs wrote there; on a failure the end of the failed ranks' logs is shown")
    p.add_argument("--log_overwrite", type=_switch, default=False,
                   help="true: empty this machine's workerlog files first (default false: append, as paddle)")
    p.add_argument("--log_level", default=None, type=str.upper, choices=_LOG_LEVELS,
                   help="the level of the pycoll logger in the launcher and the ranks (PYCOLL_LOG_LEVEL)")
    p.add_argument("--run_mode", default="collective",
                   help="paddle's job kind: only collective (the default) is supported")
    p.add_argument("--job_id", default="default", help="accepted for paddle's command lines; changes nothing")
    p.add_argument("--max_restart", type=int, default=None,
                   help="accepted for paddle's command lines: pycoll does not restart a failed job, it stops "
                        "it and exits with the failed rank's status")
    p.add_argument("--legacy", type=_switch, default=False,
                   help="accepted for paddle's command lines: pycoll has one launcher")
    for option in IGNORED_OPTIONS:  # paddle's, taken and named as ignored
        p.add_argument(option, default=None, metavar="VALUE", help="accepted for paddle's command lines; "
                       "changes nothing in a collective job")
    p.add_argument("-m", "--module", action="store_true",
                   help="treat SCRIPT as a module name, as `python -m` does")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    return p


def _master(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """paddle's ``--master IP:PORT`` into ``--master_addr``/``--master_port`` (checked against them)."""
    if args.master is None:
        return
    host, _, port = args.master.rpartition(":")
    if "://" in args.master or not host or not port.isdigit() or not 0 < int(port) < 65536:
        parser.error(f"--master {args.master}: give node 0's IP:PORT (pycoll's launchers meet there; "
                     f"etcd and other services are not supported)")
    for option, given, implied in (("--master_addr", args.master_addr, host),
                                   ("--master_port", args.master_port, int(port))):
        if given is not None and given != implied:
            parser.error(f"--master {args.master} disagrees with {option} {given}; give one of them")
    args.master_addr, args.master_port = host, int(port)


def _nodes(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Tuple[int, int, str, List[str]]:
    """``(nnodes, node_rank, master_addr, ips)`` from ``--nnodes``/``--node_rank``/``--ips``/
    ``--host``, checked."""
    ips = [ip.strip() for ip in args.ips.split(",") if ip.strip()] if args.ips else []
    nnodes = args.nnodes if args.nnodes is not None else max(1, len(ips))
    if ips and len(ips) != nnodes:
        parser.error(f"--ips names {len(ips)} machine(s) but --nnodes is {nnodes}")
    master = args.master_addr or (ips[0] if ips else "127.0.0.1")
    node_rank = None if args.node_rank == -1 else args.node_rank  # paddle's --rank -1: not given
    if node_rank is None and ips and nnodes > 1:
        here = args.host or nodes.reachable_address(master, args.master_port or 1)
        if ips.count(here) != 1:
            parser.error(f"--ips {args.ips}: cannot tell which machine this is (its address {here} "
                         f"appears {ips.count(here)} times); give --node_rank (or --host)")
        node_rank = ips.index(here)
    node_rank = node_rank or 0
    if nnodes < 1:
        parser.error(f"--nnodes {nnodes}: it must be at least 1")
    if not 0 <= node_rank < nnodes:
        parser.error(f"--node_rank {node_rank}: it must be in [0, {nnodes}) for --nnodes {nnodes}")
    if nnodes > 1 and not (args.master_port and 0 < args.master_port < 65536):
        parser.error(f"--master_port {args.master_port}: with --nnodes {nnodes} give a free TCP "
                     f"port of node 0 in [1, 65535], the same on every machine")
    return nnodes, node_rank, master, ips


def _rank_environment(parser: argparse.ArgumentParser, args: argparse.Namespace, ips: List[str],
                      gpus: List[str]) -> Dict[str, str]:
    """What the options add to every rank's environment (on top of ``_mpiexec.job_environment``)."""
    env = {}
    if gpus:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
        # paddle's launcher gives each rank its GPU's place among the visible ones; the rank
        # keeps its own entry of the list (_entry)
        env["FLAGS_selected_gpus"] = ",".join(str(i) for i in range(len(gpus)))
    if args.start_port is not None:
        if not 0 < args.start_port <= 65536 - args.nproc_per_node:
            parser.error(f"--start_port {args.start_port}: it must leave {args.nproc_per_node} ports "
                         f"below 65536")
        hosts = ips or [args.host or "127.0.0.1"] * args.nnodes
        env["PADDLE_TRAINER_ENDPOINTS"] = ",".join(f"{host}:{args.start_port + i}" for host in hosts
                                                   for i in range(args.nproc_per_node))
    if args.log_level is not None:
        env["PYCOLL_LOG_LEVEL"] = args.log_level
    # paddle's launcher tells its CPU ranks their backend (gloo); pycoll's, in paddle's spelling
    try:
        env.update(paddle_backend_variable(None, "pycoll.launch"))
    except ValueError as exc:  # PYCOLL_BACKEND names none
        parser.error(str(exc))
    if args.log_dir is not None:
        env[LOG_DIR_VAR] = env["PADDLE_LOG_DIR"] = args.log_dir
    return env


def _spelling(options: List[str], names: Tuple[str, ...]) -> str:
    """Which of an option's ``names`` the launcher's ``options`` gave it by (the last; the first
    name where none did), for messages to name the option as the user typed it."""
    used = [name for word in options for name in names if word == name or word.startswith(name + "=")]
    return used[-1] if used else names[0]


def build_command(argv: Optional[List[str]] = None,
                  paddle_entry: bool = False) -> Tuple[argparse.Namespace, List[str], Dict[str, str]]:
    """The parsed arguments, the rank command and its environment for the launcher's ``argv``
    (the command starts this machine's ranks, or with ``--nnodes`` every machine's). Under
    ``paddle_entry``, no ``--log_dir`` means paddle's ``log``, and the logs are followed on the
    terminal (``args.follow_logs``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_with_environment(_parser, argv, os.environ)
    parser = _parser(noting_parser(args.from_environment))  # its later refusals name the variables
    args.follow_logs = paddle_entry  # paddle shows the logs as they grow, wherever they go
    if args.follow_logs and args.log_dir is None:
        args.log_dir = "log"
    if args.run_mode.lower() != "collective":
        parser.error(f"--run_mode {args.run_mode}: pycoll runs collective jobs only (paddle's "
                     f"parameter-server and other modes are not supported)")
    if args.log_level is not None:
        args.log_level = _LEVEL_ALIASES.get(args.log_level, args.log_level)
        logger.setLevel(getattr(logging, args.log_level))
    nprocs = args.nproc_per_node
    gpus: List[str] = []
    options = argv[:len(argv) - len(args.script_args) - 1]  # (the script's arguments are its own)
    gpus_option = _spelling(options, ("--gpus", "--devices", "--selected_gpus"))
    if args.gpus is not None:
        try:
            gpus = selected_gpus(args.gpus, gpus_option)
        except ValueError as exc:
            parser.error(str(exc))
        nprocs = nprocs or len(gpus)
    if nprocs is None:
        nprocs = 1
    if nprocs < 1:
        parser.error(f"--nproc_per_node {nprocs}: it must be at least 1")
    if gpus and args.hostfile is None and nprocs != len(gpus):  # as spawn refuses it
        parser.error(f"{gpus_option} {args.gpus} names {len(gpus)} GPU(s) for --nproc_per_node {nprocs} ranks; "
                     f"give one GPU per rank (or leave --nproc_per_node out)")
    _master(parser, args)
    args.nnodes, args.node_rank, args.master_addr, ips = _nodes(parser, args)
    args.nproc_per_node = nprocs
    if args.module:
        try:
            found = importlib.util.find_spec(args.script)
        except ImportError:  # a dotted name whose package is missing
            found = None
        if found is None:
            parser.error(f"-m {args.script}: no module of that name can be imported here")
    elif not os.path.isfile(args.script):
        parser.error(f"{args.script}: no such script")
    if args.hostfile is not None and (args.nnodes > 1 or not os.path.isfile(args.hostfile)):
        parser.error(f"--hostfile {args.hostfile}: " + ("use either --hostfile or --nnodes" if args.nnodes > 1
                                                        else "no such file"))
    mode = "module" if args.module else "script"
    args.rank_argv = ["-m", "pycoll.distributed._entry", mode, args.script, *args.script_args]
    try:
        command = _mpiexec.rank_command(nprocs * args.nnodes, args.rank_argv,
                                        ["-f", args.hostfile] if args.hostfile else ())
    except RuntimeError as exc:  # no mpiexec (PYCOLL_MPIEXEC names none): said as an option's error
        parser.error(str(exc))
    if args.log_dir is not None:
        args.log_dir = os.path.abspath(args.log_dir)
        try:
            os.makedirs(args.log_dir, exist_ok=True)
        except OSError as exc:  # a file of that name, no permission, ...
            parser.error(f"--log_dir {args.log_dir}: cannot make that folder ({exc.strerror or exc})")
        shown = " (and is shown here as it comes)" if args.follow_logs else ""
        sys.stderr.write(f"pycoll.launch: each rank's output goes to {args.log_dir}/workerlog.RANK{shown}\n")
    env = _rank_environment(parser, args, ips, gpus)
    return args, command, _mpiexec.job_environment(env, nprocs, world=nprocs * args.nnodes)


def run_job(command: List[str], env: Dict[str, str],
            watch: Optional[Callable[[Callable[[], None]], None]] = None,
            job_dir: Optional[str] = None, ranks: int = 0) -> int:
    """Run the job; Ctrl-C, SIGTERM and SIGHUP are passed on to MPI's launcher, which stops
    every rank. ``watch(stop)``, when given, may stop the job early with a reason. With the
    ``job_dir`` of its ``ranks``, a failed job's status is its failed rank's, and a rank that
    could not say why it failed (a signal killed it) is named."""
    received = []
    leftovers_before = job_leftovers.snapshot()
    job = _mpiexec.start_job(command, env)
    ends = EndOrder(job_dir, ranks) if job_dir is not None else None

    def forward(signum, frame):
        received.append(signum)
        job.send_signal(signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    if watch is not None:
        watch(lambda: job.send_signal(signal.SIGTERM))
    status = job.wait()
    ended = ends.stop() if ends is not None else []
    # what ranks and proxies stopped untidily left (once the ranks MPI's launcher stopped are gone)
    job_leftovers.remove_left(leftovers_before, _jobdir.pids(job_dir, ranks).values() if job_dir is not None else ())
    if signal.SIGINT in received:
        sys.stderr.write("pycoll.launch: interrupted (Ctrl-C); the job was stopped\n")
        return INTERRUPTED
    if status == -signal.SIGPIPE and not received:
        try:  # stderr may be that pipe too (2>&1 | head)
            sys.stderr.write("pycoll.launch: the job's output went to a pipe whose reader has exited (`| head`, "
                             "say): MPI's launcher was ended by SIGPIPE, and the ranks with it\n")
            sys.stderr.flush()
        except BrokenPipeError:
            sys.stderr = open(os.devnull, "w")  # nothing more can be said; Python's exit must not fail either
        return 128 + signal.SIGPIPE  # a shell's status for a command ended by SIGPIPE
    if status and job_dir is not None and not received:
        failed = _jobdir.failure(job_dir, status, ranks, ended)
        if not failed.reported:
            sys.stderr.write(f"pycoll.launch: {failed.text}\n")
        elif failed.rank is not None:  # after MPI's own message, which may name a rank it stopped
            sys.stderr.write(f"pycoll.launch: rank {failed.rank} failed (exit status {failed.status}); its "
                             f"report is above (MPI's message may name a rank stopped because of it)\n")
        status = failed.status
    return status


def main(argv: Optional[List[str]] = None, paddle_entry: bool = False) -> int:
    """Run the job; ``paddle_entry``: started as ``python -m pycoll.distributed.launch``, where the
    logs default to paddle's ``--log_dir log`` and are also shown as they grow."""
    args, command, env = build_command(argv, paddle_entry)
    logs = prepare_logs(args.log_dir, args.node_rank, args.nproc_per_node, args.log_overwrite)
    follower = LogFollower(logs) if args.follow_logs else None
    try:
        if args.nnodes > 1:  # ranks on other machines cannot see this one's job folder
            status = run_nodes(args, env, logs, run_job)
        else:
            with tempfile.TemporaryDirectory(prefix="pycoll-job-") as job_dir:
                env[_jobdir.JOB_DIR_VAR] = job_dir  # what the ranks leave for this launcher (_jobdir)
                status = run_job(command, env, job_dir=job_dir, ranks=args.nproc_per_node)
    except KeyboardInterrupt:  # (run_job stops a running job's ranks itself; this is the waiting)
        sys.stderr.write("pycoll.launch: interrupted (Ctrl-C)\n")
        return INTERRUPTED
    finally:
        if follower is not None:
            follower.stop()
    if status and follower is None:
        show_failed_logs(logs)
    return status


if __name__ == "__main__":
    sys.exit(main())
