"""``pycoll.distributed.fleet``: paddle's fleet API in collective mode (``from pycoll.distributed
import fleet``). It composes the collectives, DataParallel and the model-parallel layers.
``fleet.fleet`` is a ``Fleet``, with these functions as its methods, as in paddle."""
from pycoll.distributed.dataset import DatasetBase, InMemoryDataset, QueueDataset
from pycoll.distributed.fleet import layers, meta_optimizers, meta_parallel, recompute, utils
from pycoll.distributed.fleet.collective_mode import (PaddleCloudRoleMaker, UserDefinedRoleMaker, distributed_model,
                                                      distributed_optimizer, distributed_scaler,
                                                      get_hybrid_communicate_group, get_hybrid_parallel_topology,
                                                      init)
from pycoll.distributed.fleet.collective_perf import collective_perf
from pycoll.distributed.fleet import base  # after collective_mode, whose role makers it names
from pycoll.distributed.fleet.data_generator import MultiSlotDataGenerator, MultiSlotStringDataGenerator
from pycoll.distributed.fleet.fleet_object import Fleet
from pycoll.distributed.fleet.role import Role
from pycoll.distributed.fleet.server_roles import (check_save_pre_patch_done, init_server, init_worker,
                                                   is_server, load_inference_model, load_model, load_one_table,
                                                   print_table_stat, run_server, save_cache_model, save_cache_table,
                                                   save_dense_params, save_inference_model, save_one_table,
                                                   save_persistables, server_endpoints, server_index, server_num,
                                                   set_date, shrink, stop_worker)
from pycoll.distributed.fleet.strategy import DistributedStrategy
from pycoll.distributed.fleet.topology import CommunicateTopology, HybridCommunicateGroup
from pycoll.distributed.fleet.util import UtilBase, util
from pycoll.distributed.fleet.utils.log_util import get_log_level_code, get_log_level_name, set_log_level
from pycoll.distributed.fleet.workers import (all_reduce, barrier_worker, is_first_worker, is_worker, local_device_ids,
                                              local_rank, node_num, world_device_ids, worker_endpoints, worker_index,
                                              worker_num)

fleet = Fleet()
# paddle's other names for the same queries
rank = worker_index
nranks = world_size = worker_num
rank_in_node = local_rank
minimize = fleet.minimize

__all__ = ["CommunicateTopology", "DatasetBase", "base", "DistributedStrategy", "Fleet", "HybridCommunicateGroup",
           "MultiSlotDataGenerator", "MultiSlotStringDataGenerator", "Role",
           "InMemoryDataset", "PaddleCloudRoleMaker", "QueueDataset", "UserDefinedRoleMaker", "UtilBase", "all_reduce",
           "barrier_worker", "collective_perf", "distributed_model", "distributed_optimizer", "distributed_scaler",
           "fleet",
           "get_hybrid_communicate_group", "get_hybrid_parallel_topology", "get_log_level_code", "get_log_level_name",
           "init", "init_server", "init_worker", "is_server", "run_server", "check_save_pre_patch_done",
           "load_inference_model", "load_model", "load_one_table", "print_table_stat", "save_cache_model",
           "save_cache_table", "save_dense_params", "save_inference_model", "save_one_table", "save_persistables",
           "set_date", "shrink", "server_endpoints", "server_index", "server_num", "stop_worker", "is_first_worker",
           "is_worker", "layers", "local_device_ids", "local_rank", "meta_optimizers", "meta_parallel", "minimize",
           "node_num", "nranks", "rank", "rank_in_node", "recompute", "set_log_level", "util",
           "utils", "world_device_ids", "world_size", "worker_endpoints", "worker_index", "worker_num"]
