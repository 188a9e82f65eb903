"""``DistributedStrategy``: the settings of a fleet job, typed as paddle's protobuf is, so that a
misspelt field fails instead of being ignored."""
from __future__ import annotations

from typing import Any, Dict

_HYBRID = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1, "sharding_degree": 1, "sep_degree": 1}
_CONFIGS = {  # the dict-valued fields, their keys and defaults
    "hybrid_configs": _HYBRID,
    "gradient_merge_configs": {"k_steps": 1, "avg": True},
    "sharding_configs": {"sharding_degree": 1, "stage": 1, "optimize_offload": False},
}
_FLAGS = {"fuse_all_reduce_ops": True, "fuse_grad_size_in_MB": 32, "gradient_merge": False,
          "sharding": False, "find_unused_parameters": False}


class DistributedStrategy:
    """Fields a dygraph collective job reads: ``hybrid_configs`` (``dp_degree``, ``mp_degree``,
    ``pp_degree``, ``sharding_degree``, ``sep_degree``), ``fuse_all_reduce_ops``,
    ``fuse_grad_size_in_MB`` (DataParallel's bucket size), ``find_unused_parameters``,
    ``gradient_merge`` + ``gradient_merge_configs`` (``k_steps``, ``avg``), ``sharding`` +
    ``sharding_configs`` (``sharding_degree``, ``stage`` 1/2/3 = group_sharded_parallel's levels
    os/os_g/p_g_os, ``optimize_offload``). Setting a dict field updates the keys given (paddle's behaviour);
    an unknown field or key raises, naming it."""

    def __init__(self) -> None:
        object.__setattr__(self, "_values", {**_FLAGS, **{k: dict(v) for k, v in _CONFIGS.items()}})

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            value = values[name]
            return dict(value) if isinstance(value, dict) else value
        raise AttributeError(f"DistributedStrategy has no field {name!r}; fields: {', '.join(sorted(values))}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _CONFIGS:
            if not isinstance(value, dict):
                raise TypeError(f"DistributedStrategy.{name} must be a dict, got {type(value).__name__}")
            unknown = sorted(set(value) - set(_CONFIGS[name]))
            if unknown:
                raise AttributeError(f"DistributedStrategy.{name} has no key {unknown[0]!r}; keys: "
                                     f"{', '.join(sorted(_CONFIGS[name]))}")
            self._values[name].update(value)
        elif name in _FLAGS:
            if type(value) is not type(_FLAGS[name]) and not (isinstance(_FLAGS[name], int) and isinstance(value, float)):
                raise TypeError(f"DistributedStrategy.{name} must be a {type(_FLAGS[name]).__name__}, "
                                f"got {value!r}")
            self._values[name] = value
        else:
            raise AttributeError(f"DistributedStrategy has no field {name!r}; fields: "
                                 f"{', '.join(sorted(self._values))}")

    def degrees(self) -> Dict[str, int]:
        """``hybrid_configs``' degrees; the sharding degree comes from ``sharding_configs`` when
        ``sharding`` is on and ``hybrid_configs`` leaves it at 1 (paddle's two ways to ask)."""
        degrees = dict(self._values["hybrid_configs"])
        if self._values["sharding"] and degrees["sharding_degree"] == 1:
            degrees["sharding_degree"] = self._values["sharding_configs"]["sharding_degree"]
        return degrees

    def __repr__(self) -> str:
        return f"DistributedStrategy({self._values})"
