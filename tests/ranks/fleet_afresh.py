"""fleet.init for another configuration in a process that already ran it. A second fleet.init
keeps the first call's groups (paddle 3.3.1's does, and so does pycoll's), so the rank scripts
that try several configurations in one process drop fleet's state first, as conftest's
fresh_fleet fixture does between tests."""
from pycoll.distributed import fleet
from pycoll.distributed.fleet import collective_mode


def init_afresh(strategy) -> None:
    collective_mode._state.clear()
    fleet.init(is_collective=True, strategy=strategy)
