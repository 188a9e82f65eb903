"""``hybrid_configs``' fields as paddle 3.3.1's protobuf has them, and ``Configs``, the object that
holds a nested group of them (``mp_configs``, ``pp_configs``, ...): readable and writable by
attribute, as paddle's protobuf messages are (``strategy.hybrid_configs["pp_configs"].delay_scale_loss``),
and by key, as a dict. An unknown name or a value of another type raises, naming it."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterator

# paddle's NCCLConfig message, which several of the nested configs hold
_NCCL = {"commName": "", "ll_buffsize": 0, "ll128_buffsize": 0, "simple_buffsize": 0, "buffsize_align": 0,
         "nchannels": 0, "algoStr": "", "protoStr": ""}


def _nccl(*names: str) -> Dict[str, Any]:
    return {name: dict(_NCCL) for name in names}


# paddle 3.3.1's HybridConfig message, in its order (its getter has no "order": that is
# DistributedStrategy.hybrid_parallel_order)
HYBRID_CONFIGS: Dict[str, Any] = {
    "dp_degree": -1, "mp_degree": 1, "pp_degree": 1, "sharding_degree": 1, "sep_degree": 1,
    "mp_configs": {"sync_param": True, "sync_grad": False, "sync_moment": False, "sync_mode": "broadcast",
                   "mp_async_allreduce": False, "mp_skip_c_identity": False,
                   "mp_fused_linear_param_grad_add": False, "need_broadcast_data": True,
                   "recompute_allgather": False, "sp_async_reduce_scatter": False, **_nccl("nccl_config")},
    "pp_configs": {"dp_comm_overlap": False, "delay_scale_loss": False, "enable_timer": False,
                   "sharding_comm_overlap": False, "profiling": False, "release_gradients": False,
                   "overlap_p2p_comm": False, "clear_every_step_cache": False, "use_batch_p2p_comm": True,
                   "best_unbalanced_scheduler": False, "enable_offload_queue": False,
                   "enable_dynamic_shape": False, "use_dualpipev": False,
                   "forward_backward_overlap_scheduler": False,
                   **_nccl("coll_nccl_config", "p2p_nccl_config", "shared_nccl_config"),
                   "sync_param": False, "sync_moment": False, "sync_mode": "broadcast"},
    "sharding_configs": {"tensor_fusion": False, "accumulate_steps": 1, "comm_overlap": False, "split_param": False,
                         "fuse_optimizer": True, "use_reduce_avg": True, "comm_buffer_size_MB": 256,
                         "release_gradients": False, "free_grads_in_comm": False,
                         "enable_fuse_optimizer_states": False, **_nccl("nccl_config", "check_nccl_config"),
                         "offload_opt_buffer_size": -1},
    "enable_optimizer_timer": False, "split_norm_comm": False, "ep_degree": 1, "moe_sharding_degree": 1,
    "dp_configs": _nccl("nccl_config", "check_nccl_config"), "sep_configs": _nccl("nccl_config"),
    "dp_sep_configs": _nccl("nccl_config"), "pp_tp_configs": _nccl("nccl_config"),
    "ep_configs": _nccl("nccl_config", "grad_nccl_config"),
    "moe_sharding_configs": _nccl("nccl_config", "check_nccl_config"),
    "default_comm_group_configs": _nccl("nccl_config"), "cp_degree": 1, "cp_sharding_degree": 1,
    "cp_configs": _nccl("nccl_config"), "cp_sharding_configs": _nccl("nccl_config"),
    "dp_cp_configs": _nccl("nccl_config"), "cp_mp_configs": _nccl("nccl_config"),
}


def check_type(where: str, default: Any, value: Any, exact_int: bool = True) -> Any:
    """``value`` for a setting whose default is ``default``, refused (TypeError naming ``where``)
    unless of its type, as paddle's protobuf refuses: an int for a float is taken (and a float
    for an int unless ``exact_int``), a bool never stands for a number, a tuple stands for a list."""
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int) and exact_int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, list):
        ok = isinstance(value, (list, tuple))
        value = list(value) if ok else value
    else:
        ok = isinstance(value, type(default))
    if not ok:
        kind = type(default).__name__
        raise TypeError(f"{where} must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, got {value!r}")
    return value


class UnknownKey(AttributeError, AssertionError):
    """A strategy config given a key it does not have: paddle raises AssertionError ("key:x not in
    amp_configs"), pycoll said AttributeError; either ``except`` catches it."""


class Configs(Mapping):
    """A nested group of strategy settings named ``name``, with ``defaults`` (a dict, whose dict
    values become nested Configs). Read ``c.key`` or ``c["key"]``; set ``c.key = v``,
    ``c["key"] = v`` or ``c.update({...})`` (a nested group takes a dict of its keys)."""

    def __init__(self, name: str, defaults: Dict[str, Any]):
        values = {key: Configs(f"{name}.{key}", value) if isinstance(value, dict) else value
                  for key, value in defaults.items()}
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", values)

    def __getattr__(self, key: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if key in values:
            return values[key]
        raise AttributeError(f"{self._name} has no field {key!r}; fields: {', '.join(values)}")

    def __setattr__(self, key: str, value: Any) -> None:
        if key not in self._values:
            raise AttributeError(f"{self._name} has no field {key!r}; fields: {', '.join(self._values)}")
        current = self._values[key]
        if isinstance(current, Configs):
            if not isinstance(value, Mapping):
                raise TypeError(f"{self._name}.{key} takes a dict of its fields, got {value!r}")
            current.update(value)
        else:
            self._values[key] = check_type(f"{self._name}.{key}", current, value)

    def update(self, values: Mapping) -> None:  # type: ignore[override]
        unknown = [key for key in values if key not in self._values]
        if unknown:
            raise UnknownKey(f"{self._name} has no key {unknown[0]!r}; keys: {', '.join(self._values)}")
        for key, value in values.items():
            setattr(self, key, value)

    __setitem__ = __setattr__

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            raise KeyError(key)
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def to_dict(self) -> Dict[str, Any]:
        """A plain dict of plain values, nested groups included (what save_to_prototxt writes)."""
        return {key: value.to_dict() if isinstance(value, Configs) else value for key, value in self._values.items()}

    def __repr__(self) -> str:
        return repr(self.to_dict())
