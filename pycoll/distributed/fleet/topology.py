"""paddle's ``CommunicateTopology`` (the grid of a hybrid job: named axes, their sizes, rank ↔
coordinate) and ``HybridCommunicateGroup`` (this rank's place on it and the groups along each
axis). The axes come in the order ``strategy.hybrid_parallel_order`` gives (set as
``hybrid_configs["order"]``; paddle's default: data, pipe, sharding, sep, context, model, the last
varying fastest), so rank = the grid index of the coordinate, as in paddle."""
from __future__ import annotations

import collections
import itertools
import os
from typing import Any, Dict, List, Optional, Tuple

import pycoll.distributed as dist
from pycoll.distributed.parallel_mode import ParallelMode

# paddle's short names in hybrid_parallel_order -> the topology's axis names
AXIS_NAMES = {"dp": "data", "pp": "pipe", "sharding": "sharding", "sep": "sep", "cp": "context", "mp": "model"}

# the HybridCommunicateGroup made last (paddle's module global of that name, set by its constructor)
_HYBRID_PARALLEL_GROUP: Optional["HybridCommunicateGroup"] = None


class CommunicateTopology:
    """The grid: ``hybrid_group_names`` (axis names, slowest first) of sizes ``dims``; global
    rank r sits at the r-th coordinate in row-major order."""

    def __init__(self, hybrid_group_names: Optional[List[str]] = None, dims: Optional[List[int]] = None):
        names = list(hybrid_group_names if hybrid_group_names is not None
                     else ["data", "pipe", "sharding", "sep", "context", "model"])
        dims = list(dims if dims is not None else [1] * len(names))
        if len(names) != len(dims) or len(set(names)) != len(names):
            raise ValueError(f"CommunicateTopology: hybrid_group_names={names} and dims={dims} must name "
                             f"distinct axes, one size each")
        if any(not isinstance(d, int) or d < 1 for d in dims):
            raise ValueError(f"CommunicateTopology: dims={dims}; each must be an int >= 1")
        self._parallel_names = names
        self._dims = dims
        self.coordinate = collections.namedtuple("Coordinate", names)
        coords = [self.coordinate(*c) for c in itertools.product(*(range(d) for d in dims))]
        self._coord2rank = {c: r for r, c in enumerate(coords)}
        self._rank2coord = dict(enumerate(coords))
        self._world_size = len(coords)

    def get_hybrid_group_names(self) -> List[str]:
        return self._parallel_names

    def _axis(self, axis_name: str) -> int:
        if axis_name not in self._parallel_names:
            raise ValueError(f"CommunicateTopology: axis_name={axis_name!r}; the axes are {self._parallel_names}")
        return self._parallel_names.index(axis_name)

    def get_dim(self, axis_name: str) -> int:
        return self._dims[self._axis(axis_name)]

    get_dim_size = get_dim

    def world_size(self) -> int:
        return self._world_size

    def get_rank(self, **args: int) -> int:
        """The global rank at the coordinate given axis by axis (every axis named)."""
        if sorted(args) != sorted(self._parallel_names):
            raise ValueError(f"CommunicateTopology.get_rank: got axes {sorted(args)}; give each of "
                             f"{self._parallel_names}")
        key = self.coordinate(**args)
        if key not in self._coord2rank:
            raise ValueError(f"CommunicateTopology.get_rank: {key} is outside the grid {self._dims}")
        return self._coord2rank[key]

    def get_coord(self, rank: int) -> Any:
        if rank not in self._rank2coord:
            raise ValueError(f"CommunicateTopology.get_coord: rank={rank}; the grid has ranks 0..{self._world_size - 1}")
        return self._rank2coord[rank]

    def get_axis_list(self, axis_name: str, index: int) -> List[int]:
        """The global ranks whose coordinate on ``axis_name`` is ``index``, sorted."""
        axis = self._axis(axis_name)
        return sorted(r for c, r in self._coord2rank.items() if c[axis] == index)

    def get_comm_list(self, axis_name: str) -> List[List[int]]:
        """For each setting of the other axes (in grid order), the ranks along ``axis_name``."""
        axis = self._axis(axis_name)
        others = [range(d) if i != axis else [0] for i, d in enumerate(self._dims)]
        lines = []
        for point in itertools.product(*others):
            lines.append([self._coord2rank[self.coordinate(*point[:axis], i, *point[axis + 1:])]
                          for i in range(self._dims[axis])])
        return lines

    def get_fused_ranks(self, fused_axis: List[str]) -> List[List[int]]:
        """For each setting of the axes not in ``fused_axis`` (in grid order), the ranks over every
        coordinate of the ``fused_axis`` axes (the first named varying slowest): the members of
        a group spanning those axes together, as paddle's ``create_fuse_group`` makes them."""
        fused = [self._axis(name) for name in fused_axis]
        if len(set(fused)) != len(fused):
            raise ValueError(f"CommunicateTopology.get_fused_ranks: fused_axis={list(fused_axis)} names an axis twice")
        others = [range(d) if i not in fused else [0] for i, d in enumerate(self._dims)]
        lines = []
        for point in itertools.product(*others):
            line = []
            for values in itertools.product(*(range(self._dims[a]) for a in fused)):
                coord = list(point)
                for axis, value in zip(fused, values):
                    coord[axis] = value
                line.append(self._coord2rank[self.coordinate(*coord)])
            lines.append(line)
        return lines

    def get_rank_from_stage(self, global_rank: int, **kwargs: int) -> int:
        """The rank at ``global_rank``'s coordinate with the axes in ``kwargs`` changed."""
        return self.get_rank(**self.get_coord(global_rank)._replace(**kwargs)._asdict())

    def __repr__(self) -> str:
        return f"CommunicateTopology({self._parallel_names}, {self._dims})"


class HybridCommunicateGroup:
    """This rank's place on ``topology`` and the groups along its data, pipe, sharding and model
    axes; with a sep degree above 1 (as paddle's, only then) the sep group and the fused data x
    sep and pipe x model groups; paddle's check group (the ranks of this rank's data index: a
    global norm or a found inf spans them) and, with ``PADDLE_USE_FOUR_DIRECTIONS_P2P`` set,
    paddle's four point-to-point groups of a pipeline. Every rank builds every group, in the same
    order. A group of one rank says ``rank`` 0 for that rank, where paddle 3.3.1's
    says -1 (its ``new_group`` makes no communicator for one rank, so its ``is_member()`` is
    False too): pycoll's is a working group, which the model-parallel layers use when
    ``mp_degree`` is 1."""

    def __init__(self, topology: CommunicateTopology, hybrid_configs: Any = None):
        self._topo = topology
        self.nranks = dist.get_world_size()
        self.global_rank = dist.get_rank()
        if topology.world_size() != self.nranks:
            raise ValueError(f"HybridCommunicateGroup: topology {topology} holds {topology.world_size()} "
                             f"ranks, but the job has {self.nranks}")
        names = topology.get_hybrid_group_names()
        self._degrees = {a: topology.get_dim(a) if a in names else 1
                         for a in ("data", "pipe", "sharding", "sep", "model")}
        coord = topology.get_coord(self.global_rank)._asdict()
        self._coords = {a: coord.get(a, 0) for a in self._degrees}
        self._groups: Dict[str, dist.Group] = {}
        self._lines: Dict[str, List[int]] = {}
        for axis in ("pipe", "data", "model", "sharding") + (("sep",) if self._degrees["sep"] > 1 else ()):
            for members in (topology.get_comm_list(axis) if axis in names else [[r] for r in range(self.nranks)]):
                group = dist.new_group(members)
                if self.global_rank in members:
                    self._groups[axis], self._lines[axis] = group, members
        self.stage_id = self._coords["pipe"]
        self.is_first_stage = self.stage_id == 0
        self.is_last_stage = self.stage_id == self._degrees["pipe"] - 1
        self._check_groups = {axis: self._index_group(axis) for axis in ("data", "sharding")
                              if axis == "data" or self._degrees[axis] > 1}
        pipe = self._lines["pipe"]
        self.next_rank = pipe[(self.stage_id + 1) % len(pipe)]
        self.prev_rank = pipe[(self.stage_id - 1) % len(pipe)]
        if self._degrees["sep"] > 1:  # paddle's fused groups, made only beside sep
            self._groups["dp_sep"] = self.create_fuse_group(["data", "sep"])[1]
            self._groups["pp_mp"] = self.create_fuse_group(["pipe", "model"])[1]
        self._p2p_groups: Optional[Tuple[dist.Group, ...]] = None
        if self._degrees["pipe"] > 1 and os.environ.get("PADDLE_USE_FOUR_DIRECTIONS_P2P", "").lower() in (
                "1", "true", "yes", "on"):
            self._p2p_groups = self._four_directions()
        global _HYBRID_PARALLEL_GROUP
        _HYBRID_PARALLEL_GROUP = self

    def _index_group(self, axis: str) -> dist.Group:
        """paddle's check group along ``axis``: the ranks sharing this rank's index on it."""
        names = self._topo.get_hybrid_group_names()
        mine = None
        for index in range(self._degrees[axis]):
            members = self._topo.get_axis_list(axis, index) if axis in names else list(range(self.nranks))
            group = dist.new_group(members)
            if self.global_rank in members:
                mine = group
        return mine

    def _four_directions(self) -> Tuple[dist.Group, ...]:
        """paddle's send-next, send-prev, recv-next and recv-prev groups: a two-rank group per
        pair of neighbouring stages and direction, made in paddle's order."""
        mine: Dict[str, dist.Group] = {}
        for line in self._topo.get_comm_list("pipe"):
            for idx, rank in enumerate(line):
                nxt, prev = line[(idx + 1) % len(line)], line[(idx - 1) % len(line)]
                forward, backward = dist.new_group([rank, nxt]), dist.new_group([prev, rank])
                if self.global_rank == rank:
                    mine["send_next"], mine["send_prev"] = forward, backward
                if self.global_rank == nxt:
                    mine["recv_prev"] = forward
                if self.global_rank == prev:
                    mine["recv_next"] = backward
        return mine["send_next"], mine["send_prev"], mine["recv_next"], mine["recv_prev"]

    def topology(self) -> CommunicateTopology:
        return self._topo

    def get_global_rank(self) -> int:
        return self.global_rank

    # data parallel
    def get_data_parallel_rank(self) -> int:
        return self._coords["data"]

    def get_data_parallel_world_size(self) -> int:
        return self._degrees["data"]

    def get_data_parallel_group(self) -> dist.Group:
        return self._groups["data"]

    def get_data_parallel_group_src_rank(self) -> int:
        return self._groups["data"].ranks[0]

    # model parallel
    def get_model_parallel_rank(self) -> int:
        return self._coords["model"]

    def get_model_parallel_world_size(self) -> int:
        return self._degrees["model"]

    def get_model_parallel_group(self) -> dist.Group:
        return self._groups["model"]

    def get_model_parallel_group_src_rank(self) -> int:
        return self._groups["model"].ranks[0]

    # sharding
    def get_sharding_parallel_rank(self) -> int:
        return self._coords["sharding"]

    def get_sharding_parallel_world_size(self) -> int:
        return self._degrees["sharding"]

    def get_sharding_parallel_group(self) -> dist.Group:
        return self._groups["sharding"]

    def get_sharding_parallel_group_src_rank(self) -> int:
        return self._groups["sharding"].ranks[0]

    # sep (segment / sequence) parallel: its groups exist only with sep_degree > 1, as paddle's
    def get_sep_parallel_rank(self) -> int:
        return self._coords["sep"]

    def get_sep_parallel_world_size(self) -> int:
        return self._degrees["sep"]

    def _sep_group(self, key: str, fn: str, what: str) -> dist.Group:
        if key not in self._groups:
            raise RuntimeError(f"HybridCommunicateGroup.{fn}: sep_degree is 1, so there is no {what} (paddle "
                               f"builds it only with sep and asserts 'sep not exist' too); check "
                               f"get_sep_parallel_world_size() > 1 first")
        return self._groups[key]

    def get_sep_parallel_group(self) -> dist.Group:
        return self._sep_group("sep", "get_sep_parallel_group", "sep group")

    def get_sep_parallel_group_src_rank(self) -> int:
        return self.get_sep_parallel_group().ranks[0]

    def get_dp_sep_parallel_group(self) -> dist.Group:
        """The ranks of this rank's data and sep axes together: a sep job's gradients are summed
        over them (averaged over data, summed over sep: ``fused_allreduce_gradients``)."""
        return self._sep_group("dp_sep", "get_dp_sep_parallel_group", "dp x sep group")

    def get_pp_mp_parallel_group(self) -> dist.Group:
        return self._sep_group("pp_mp", "get_pp_mp_parallel_group", "pp x mp group")

    def create_fuse_group(self, fused_strategy_list: List[str], nccl_config: Any = None) -> Tuple[Any, Any]:
        """A group for each line of the topology's ``fused_strategy_list`` axes together (every
        rank makes every one, in sorted order, as paddle's; ``nccl_config`` goes to ``new_group``);
        returns this rank's (ranks, group), or lists of them where the rank is on several lines
        (never, for axes of one grid)."""
        if not fused_strategy_list:
            raise ValueError("HybridCommunicateGroup.create_fuse_group: fused_strategy_list is empty; name the "
                             f"axes to fuse, of {self._topo.get_hybrid_group_names()}")
        lines, groups = [], []
        for members in sorted(self._topo.get_fused_ranks(list(fused_strategy_list))):
            group = dist.new_group(members, nccl_config=nccl_config)
            if self.global_rank in members:
                lines.append(members)
                groups.append(group)
        return (lines, groups) if len(lines) > 1 else (lines[0], groups[0])

    def get_moe_sharding_parallel_world_size(self) -> int:
        """0, as paddle's group of a job without expert (MoE) parallelism says."""
        return 0

    # the group a global norm or a found inf spans
    def get_check_parallel_group(self, sharding: bool = False) -> dist.Group:
        """paddle's: the ranks of this rank's data-parallel index (every stage and model-parallel
        rank of one copy of the model); with ``sharding``, those of its sharding index (only
        where sharding_degree > 1, as paddle builds it)."""
        axis = "sharding" if sharding else "data"
        if axis not in self._check_groups:
            raise RuntimeError("HybridCommunicateGroup.get_check_parallel_group: sharding=True, but sharding_degree "
                               "is 1, so there is no sharding check group (paddle builds none either)")
        return self._check_groups[axis]

    # pipeline parallel
    def get_p2p_groups(self) -> Tuple[dist.Group, ...]:
        """paddle's (send_next, send_prev, recv_next, recv_prev) two-rank groups, built when
        ``PADDLE_USE_FOUR_DIRECTIONS_P2P`` is set (pycoll's pipeline sends over the pipe group
        and needs none of them)."""
        if self._p2p_groups is None:
            raise RuntimeError("HybridCommunicateGroup.get_p2p_groups: the four-direction p2p groups are built only "
                               "with pp_degree > 1 and the environment variable PADDLE_USE_FOUR_DIRECTIONS_P2P set "
                               "(as paddle's); set it before fleet.init")
        return self._p2p_groups

    def get_stage_id(self) -> int:
        return self.stage_id

    def get_pipe_parallel_rank(self) -> int:
        return self.stage_id

    def get_pipe_parallel_world_size(self) -> int:
        return self._degrees["pipe"]

    def get_pipe_parallel_group(self) -> dist.Group:
        return self._groups["pipe"]

    def get_rank_from_stage(self, stage_id: int, **kwargs: int) -> int:
        """The global rank of ``stage_id`` on this rank's pipeline (other axes as in ``kwargs``)."""
        return self._topo.get_rank_from_stage(self.global_rank, pipe=stage_id, **kwargs)

    def _get_p2p_next_rank(self) -> int:
        return self.next_rank

    def _get_p2p_prev_rank(self) -> int:
        return self.prev_rank

    def get_parallel_mode(self) -> Optional[int]:
        """paddle's ``ParallelMode``: PIPELINE_PARALLEL with pipeline stages (whatever else), else
        TENSOR_PARALLEL with model parallelism, else SEGMENT_PARALLEL with sep, else
        SHARDING_PARALLEL with sharding (dp beside it or not), else DATA_PARALLEL with data
        parallelism; None for a job with none (paddle returns nothing there either)."""
        if self._degrees["pipe"] > 1:
            return ParallelMode.PIPELINE_PARALLEL
        if self._degrees["model"] > 1:
            return ParallelMode.TENSOR_PARALLEL
        if self._degrees["sep"] > 1:
            return ParallelMode.SEGMENT_PARALLEL
        if self._degrees["sharding"] > 1:
            return ParallelMode.SHARDING_PARALLEL
        return ParallelMode.DATA_PARALLEL if self._degrees["data"] > 1 else None
