import pycoll.distributed.fleet as fleet
strategy = fleet.DistributedStrategy()
strategy.sharding = True
