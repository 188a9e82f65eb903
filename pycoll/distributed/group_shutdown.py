"""Releasing a group's communicator and making it again (paddle's ``shutdown_process_group`` /
``restart_process_group``), for jobs that must let go of a group's resources for a while (a
fault-tolerant restart, memory for another phase) and keep the Group objects they hold.

A shut-down group keeps its id, ranks and timeout; it has no engine, so every call on it is
refused before anything moves, naming the group and the way back. Restarting makes the engine
the way ``new_group`` made it: from the world's engine, by the group's members alone on the cpu
backend (MPI), by every rank of the world on nccl (a split of the world's communicator). The
world itself is neither shut down nor restarted (paddle's ``None`` spares it too): every other
group is made from it; ``destroy_process_group()`` releases it.
"""
from __future__ import annotations

from typing import Any, List, Optional

from pycoll._errors import CollectiveError
from pycoll.distributed import env
from pycoll.distributed.group import Group
from pycoll.distributed.task import drain


def _targets(group: Optional[Group], fn: str) -> List[Group]:
    world = env.world_group(fn)
    if group is None:
        return [g for g in list(env._groups.values()) if g is not world]  # noqa: SLF001 (env's registry of live groups)
    if not isinstance(group, Group):
        raise TypeError(f"pycoll.distributed.{fn}: group must be a Group from new_group() or None "
                        f"(every group but the world), got {type(group).__name__}")
    if group is world:
        raise ValueError(f"pycoll.distributed.{fn}: group is the world ({world.describe()}), which every "
                         f"other group is made from; pass a group from new_group(), or None for all of them "
                         f"(destroy_process_group() releases the world)")
    return [group]


def shutdown_process_group(group: Optional[Group] = None) -> None:
    """Release ``group``'s communicator once its work in flight is complete; with None, that of
    every group but the world. Every member calls it (on nccl, every rank of the world: the
    restart is a collective over the world). A group already shut down, destroyed, or (on the cpu
    backend) without this rank is left as it is."""
    nccl = env.world_group("shutdown_process_group").backend_name == "nccl"
    for g in _targets(group, "shutdown_process_group"):
        if g.shut_down or g.id not in env._groups:  # noqa: SLF001 (a destroyed group stays destroyed)
            continue
        engine = g.engine
        if engine is not None:
            drain(g)
            g.engine = None  # first: the watchdog thread reads it
            engine.free()
            g.shut_down = True
        elif nccl:  # not a member, but its restart will be a split of the world's communicator
            g.shut_down = True


def restart_process_group(group: Optional[Group] = None) -> None:
    """Make ``group``'s communicator again after :func:`shutdown_process_group`; with None, that
    of every group shut down, in the order they were made. Called where the shutdown was: by the
    group's members on the cpu backend, by every rank of the world on nccl. A group that is not
    shut down is left as it is."""
    for g in _targets(group, "restart_process_group"):
        if g.shut_down:
            g.engine = _engine_for(g)
            g.shut_down = False


def _engine_for(g: Group) -> Any:
    """A new engine over ``g``'s ranks (None on a rank outside it), made as ``new_group`` makes one."""
    try:
        return env.engine_over(g.ranks, g.timeout, "restart_process_group")
    except Exception as exc:
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
        raise CollectiveError(f"restart_process_group: no new communicator for {g.describe()} on "
                              f"rank {env.world_group('restart_process_group').rank}: {cause}") from exc
