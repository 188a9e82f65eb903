import pycoll.distributed.fleet as fleet
strategy = fleet.DistributedStrategy()
strategy.amp = True
# pure fp16
strategy.amp_configs = {
    "init_loss_scaling": 32768,
    "use_pure_fp16": True
}
