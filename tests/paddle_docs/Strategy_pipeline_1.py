import pycoll
import pycoll.distributed as dist
strategy = dist.Strategy()
strategy.pipeline.enable = True
strategy.pipeline.micro_batch_size = 2
