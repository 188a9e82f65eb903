# sharding-DP, 2 nodes with 8 gpus per node
import pycoll.distributed.fleet as fleet
strategy = fleet.DistributedStrategy()
strategy.sharding = True
strategy.sharding_configs = {
    "sharding_segment_strategy": "segment_broadcast_MB",
    "segment_broadcast_MB": 32,
    "sharding_degree": 8,
    "dp_degree": 2,
    "gradient_merge_acc_step": 4,
}
