import pycoll.distributed.fleet as fleet
strategy = fleet.DistributedStrategy()
strategy.pipeline = True
