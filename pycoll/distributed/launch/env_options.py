"""The launcher's options given through the environment, as paddle's launcher takes them
(``paddle/distributed/launch/context/args_envs.py``, ``env_args_mapping``).

Paddle 3.3.1 reads each of these variables over its option, the command line included: with
``PADDLE_NPROC_PER_NODE=2``, ``--nproc_per_node 1`` starts 2 ranks (measured), and it prints a
warning saying so. pycoll does the same for the options its launcher has (:data:`ENV_OPTIONS`);
a value that option refuses is refused naming the variable.

The others belong to paddle's parameter-server, elastic and auto-parallel launchers. Most change
nothing in a collective job that pycoll runs (``PADDLE_WITH_GLOO=1`` is a fleet variable users
export): they are ignored, in one line (:data:`IGNORED`). Those whose value asks for another kind
of job (:data:`REFUSED`: a parameter-server job, paddle's auto-parallel tuner) are refused, since
pycoll would run a collective job instead, silently not the one asked for.
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable, Dict, List, Mapping, Tuple

# paddle's variable -> the option of pycoll's launcher it sets, in paddle's order
ENV_OPTIONS = {
    "POD_IP": "--host", "PADDLE_MASTER": "--master", "PADDLE_DEVICES": "--devices",
    "PADDLE_NNODES": "--nnodes", "PADDLE_RUN_MODE": "--run_mode", "PADDLE_LOG_LEVEL": "--log_level",
    "PADDLE_LOG_OVERWRITE": "--log_overwrite", "PADDLE_NPROC_PER_NODE": "--nproc_per_node",
    "PADDLE_JOB_ID": "--job_id", "PADDLE_RANK": "--rank", "PADDLE_LOG_DIR": "--log_dir",
    "PADDLE_MAX_RESTART": "--max_restart", "PADDLE_START_PORT": "--start_port", "PADDLE_IPS": "--ips",
}
# paddle's variables for options pycoll's launcher does not have and that change nothing in a
# collective job: node order by IP (pycoll's come from --rank or --ips), elastic restarts (pycoll
# never restarts a failed job; the job fails), the parameter-server job's gloo, the tuner's cluster
IGNORED = {
    "PADDLE_SORT_IP": "--sort_ip", "PADDLE_ELASTIC_LEVEL": "--elastic_level",
    "PADDLE_ELASTIC_TIMEOUT": "--elastic_timeout", "PADDLE_GLOO_PORT": "--gloo_port",
    "PADDLE_WITH_GLOO": "--with_gloo", "PADDLE_AUTO_CLUSTER": "--auto_cluster_config",
}
# the options of those variables, and paddle's --enable_gpu_log (it has none): taken on the
# command line and named as ignored
IGNORED_OPTIONS = (*IGNORED.values(), "--enable_gpu_log")
# paddle's variables whose value asks for a job pycoll cannot run -> (option, that job, the values
# that do not ask for it: paddle starts a parameter-server job for a server or trainer count other
# than 0, or any endpoint list; the tuner for any config)
_PS = "a parameter-server job (pycoll runs collective jobs only)"
REFUSED = {
    "PADDLE_SERVER_NUM": ("--server_num", _PS, ("", "0")),
    "PADDLE_TRAINER_NUM": ("--trainer_num", _PS, ("", "0")),
    "PADDLE_SERVERS_ENDPOINTS": ("--servers", _PS, ("",)),
    "PADDLE_TRAINERS_ENDPOINTS": ("--trainers", _PS, ("",)),
    "PADDLE_AUTO_PARALLEL_CONFIG": ("--auto_parallel_config", "paddle's auto-parallel tuner (pycoll "
                                    "runs the script as it is)", ()),
}


def given_options(environ: Mapping[str, str]) -> List[Tuple[str, str, str]]:
    """``(variable, option, value)`` for each of paddle's variables of pycoll's options set in
    ``environ``."""
    return [(var, option, environ[var]) for var, option in ENV_OPTIONS.items() if var in environ]


def _paddle_only(parser: argparse.ArgumentParser, args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    """Refuse a variable of :data:`REFUSED` that asks for its job; name those ignored (variables
    and the same options on the command line) in one line."""
    for var, (option, job, harmless) in REFUSED.items():
        if var in environ and environ[var].strip() not in harmless:
            parser.error(f"{var}={environ[var]} (paddle's launcher option {option}, taken from the "
                         f"environment) asks for {job}; unset {var}")
    ignored = [f"{var}={environ[var]}" for var in (*IGNORED, *REFUSED) if var in environ]
    ignored += [f"{option} {getattr(args, option[2:])}" for option in IGNORED_OPTIONS
                if getattr(args, option[2:], None) is not None]
    if ignored:
        sys.stderr.write(f"pycoll.launch: ignoring {', '.join(ignored)} (paddle's launcher options that "
                         f"pycoll's does not have; they change nothing in a collective job)\n")


def parse_with_environment(make_parser: Callable[..., argparse.ArgumentParser], argv: List[str],
                           environ: Mapping[str, str]) -> argparse.Namespace:
    """The launcher's arguments from ``argv``, each option paddle's variables of ``environ`` set
    taken from there instead (see the module's text). ``make_parser(cls)`` builds the launcher's
    parser as a ``cls``. Exits with a usage error naming the variable for one that is refused."""
    parser = make_parser(argparse.ArgumentParser)
    args = parser.parse_args(argv)
    _paddle_only(parser, args, environ)
    given = given_options(environ)
    if given:
        args = _with_environment(make_parser, parser, argv, args, given)
    args.from_environment = {option: var for var, option, _ in given}  # what messages name
    return args


def _with_environment(make_parser: Callable[..., argparse.ArgumentParser], parser: argparse.ArgumentParser,
                      argv: List[str], args: argparse.Namespace,
                      given: List[Tuple[str, str, str]]) -> argparse.Namespace:
    """``argv`` parsed again with the ``given`` options placed after its own (the later wins),
    each first checked alone so that a refusal names its variable."""
    alone = make_parser(argparse.ArgumentParser)
    alone.exit_on_error = False  # a refused value raises, for the message to name its variable
    for var, option, value in given:
        try:
            alone.parse_args([f"{option}={value}", "script"])
        except argparse.ArgumentError as exc:
            parser.error(f"{var}={value} (paddle's launcher option {option}, taken from the "
                         f"environment): {exc}")
        sys.stderr.write(f"pycoll.launch: {option} {value} from {var} (as paddle's launcher, its "
                         f"variables override the command line)\n")
    script_at = len(argv) - len(args.script_args) - 1  # the options end before the script
    while script_at > 0 and argv[script_at - 1] == "--":
        script_at -= 1
    tokens = [f"{option}={value}" for _, option, value in given]
    return parser.parse_args([*argv[:script_at], *tokens, *argv[script_at:]])


def noting_parser(from_environment: Dict[str, str]) -> type:
    """An ``ArgumentParser`` class whose usage errors also say which options came from paddle's
    variables (``from_environment``: option -> variable), for the launcher's later checks."""
    if not from_environment:
        return argparse.ArgumentParser
    note = ", ".join(f"{option} from {var}" for option, var in from_environment.items())

    class Noting(argparse.ArgumentParser):
        def error(self, message: str):
            super().error(f"{message} ({note})")

    return Noting
