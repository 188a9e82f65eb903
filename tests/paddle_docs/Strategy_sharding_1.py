import pycoll
import pycoll.distributed as dist
strategy = dist.Strategy()
strategy.sharding.enable = True
strategy.sharding.stage = 2
strategy.sharding.degree = 2
