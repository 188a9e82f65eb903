import pycoll.distributed.fleet as fleet
strategy = fleet.DistributedStrategy()
strategy.fuse_grad_merge = True
