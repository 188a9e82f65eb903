"""``paddle.utils.unique_name``: ``generate(key)`` numbers names per key (``fc_0``, ``fc_1``, ...)
from the same counters that name layers (`pycoll.nn.layer`: ``Linear`` -> ``linear_0``), so a
generated name and a layer's never collide, as in paddle; ``guard()`` / ``switch()`` start a fresh
namespace (layers made inside are numbered from 0 again) and give the old one back.

A namespace is a `UniqueNameGenerator`: its counters, and a prefix put before the names it
generates (``guard('A')`` -> ``Afc_0``). The active namespace's counters live in the layers' table;
switching saves them into the generator that was active and loads the new one's. (paddle also
puts the prefix before layer names made inside ``guard('A')``; pycoll's layers take the fresh
numbering, not the prefix.)"""
from __future__ import annotations

import contextlib
import itertools
from typing import Dict, Iterator, Optional, Tuple, Union

from pycoll.nn import layer as _layer


class UniqueNameGenerator:
    """A naming namespace: per-key counters and a prefix for the names it generates."""

    def __init__(self, prefix: Optional[str] = None) -> None:
        if prefix is not None and not isinstance(prefix, str):
            raise TypeError(f"UniqueNameGenerator: prefix must be a str or None, got {type(prefix).__name__}")
        self.prefix = prefix or ""
        self._saved: Dict[str, itertools.count] = {}  # the counters while another namespace is active

    def __call__(self, key: str) -> str:
        return self.generate(key)

    def generate(self, key: str) -> str:
        """``prefix + key + '_' + n``, n counting from 0 per key (in the active namespace's counters)."""
        if not isinstance(key, str):
            raise TypeError(f"generate: key must be a str, got {type(key).__name__}")
        return self.prefix + _layer._unique_name(key)


_active = UniqueNameGenerator()
_tmp_ids = itertools.count()


def generate(key: str) -> str:
    """A new name with prefix `key`: ``key_0``, ``key_1``, ... (shared with layers' names)."""
    return _active.generate(key)


def generate_with_ignorable_key(key: str) -> str:
    """A new temporary name, ``dygraph_tmp_N`` whatever the key (paddle's in dynamic mode)."""
    return f"dygraph_tmp_{next(_tmp_ids)}"


def switch(new_generator: Optional[UniqueNameGenerator] = None,
           new_para_name_checker: object = None) -> Tuple[UniqueNameGenerator, object]:
    """Make `new_generator` (default: a fresh one) the active namespace; returns the previous one
    (and paddle's parameter-name checker slot, unused here: pycoll keeps none), which
    ``switch(*returned)`` makes active again."""
    global _active
    if new_generator is None:
        new_generator = UniqueNameGenerator()
    if not isinstance(new_generator, UniqueNameGenerator):
        raise TypeError(f"switch: new_generator must be a UniqueNameGenerator or None, got "
                        f"{type(new_generator).__name__}")
    old = _active
    if new_generator is not old:
        counters = _layer._name_counters
        old._saved = dict(counters)
        counters.clear()
        counters.update(new_generator._saved)
        _active = new_generator
    return old, new_para_name_checker


@contextlib.contextmanager
def guard(new_generator: Union[str, bytes, UniqueNameGenerator, None] = None) -> Iterator[None]:
    """Names inside the block come from a fresh namespace (numbered from 0 again), prefixed by
    `new_generator` when it is a str/bytes; the previous namespace resumes after it."""
    if isinstance(new_generator, bytes):
        new_generator = new_generator.decode()
    if isinstance(new_generator, str):
        new_generator = UniqueNameGenerator(new_generator)
    if new_generator is not None and not isinstance(new_generator, UniqueNameGenerator):
        raise TypeError(f"guard: new_generator must be a str, bytes, UniqueNameGenerator or None, got "
                        f"{type(new_generator).__name__}")
    old, checker = switch(new_generator)
    try:
        yield
    finally:
        switch(old, checker)
