"""``pycoll.distributed.fleet``: paddle's fleet API in collective mode (``from pycoll.distributed
import fleet``). It composes the collectives, DataParallel and the model-parallel layers."""
from pycoll.distributed.dataset import DatasetBase, InMemoryDataset, QueueDataset
from pycoll.distributed.fleet import layers, meta_parallel, recompute, utils
from pycoll.distributed.fleet.fleet import (PaddleCloudRoleMaker, UserDefinedRoleMaker, all_reduce, barrier_worker,
                                            distributed_model, distributed_optimizer, distributed_scaler,
                                            get_hybrid_communicate_group, get_hybrid_parallel_topology, init,
                                            is_first_worker, is_worker, local_rank, worker_endpoints, worker_index,
                                            worker_num)
from pycoll.distributed.fleet.strategy import DistributedStrategy
from pycoll.distributed.fleet.topology import CommunicateTopology, HybridCommunicateGroup
from pycoll.distributed.fleet.util import UtilBase, util

__all__ = ["CommunicateTopology", "DatasetBase", "DistributedStrategy", "HybridCommunicateGroup", "InMemoryDataset",
           "PaddleCloudRoleMaker", "QueueDataset", "UserDefinedRoleMaker", "UtilBase", "all_reduce", "barrier_worker",
           "distributed_model", "distributed_optimizer", "distributed_scaler", "get_hybrid_communicate_group",
           "get_hybrid_parallel_topology", "init", "is_first_worker", "is_worker", "layers", "local_rank",
           "meta_parallel", "recompute", "util", "utils", "worker_endpoints", "worker_index", "worker_num"]
