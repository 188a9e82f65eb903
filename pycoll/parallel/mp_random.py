"""Named random states for model parallelism (paddle's ``RNGStatesTracker``).

In a tensor-parallel layer some draws must differ between the ranks of the model-parallel group
(dropout on a column-split activation, the pieces of a split weight) while the rest of the model
draws alike everywhere. The tracker keeps one generator per name; inside ``rng_state(name)`` every
draw of pycoll comes from that generator (``pycoll.random.drawing_from``), which moves on, and the
global one is left where it was.
"""
from __future__ import annotations

import contextlib
import copy
from typing import Any, Dict, Iterator, Set

import numpy as np

from pycoll.random import check_seed, drawing_from

MODEL_PARALLEL_RNG = "model_parallel_rng"


class RNGStatesTracker:
    """Generators by name: ``add(name, seed)``, then ``with tracker.rng_state(name):``."""

    def __init__(self) -> None:
        self.states_: Dict[str, np.random.Generator] = {}
        self.seeds_: Set[int] = set()

    def reset(self) -> None:
        self.states_ = {}
        self.seeds_ = set()

    def add(self, name: str, seed: int) -> None:
        """A new state ``name`` seeded with ``seed``; each name and each seed at most once."""
        check_seed(seed)
        if seed in self.seeds_:
            raise ValueError(f"seed {seed} already exists")
        if name in self.states_:
            raise ValueError(f"state {name} already exists")
        self.seeds_.add(seed)
        self.states_[name] = np.random.default_rng(int(seed))

    def get_states_tracker(self) -> Dict[str, Dict[str, Any]]:
        """Every state by name (copies), for ``set_states_tracker``."""
        return {name: copy.deepcopy(gen.bit_generator.state) for name, gen in self.states_.items()}

    def set_states_tracker(self, states: Dict[str, Dict[str, Any]]) -> None:
        for name, state in states.items():
            if name not in self.states_:
                raise ValueError(f"state {name} does not exist")
            self.states_[name].bit_generator.state = copy.deepcopy(state)

    @contextlib.contextmanager
    def rng_state(self, name: str = MODEL_PARALLEL_RNG) -> Iterator[None]:
        if name not in self.states_:
            raise ValueError(f"state {name} does not exist")
        with drawing_from(self.states_[name]):
            yield


_tracker = RNGStatesTracker()


def get_rng_state_tracker() -> RNGStatesTracker:
    """The process's tracker (one, as paddle's)."""
    return _tracker
