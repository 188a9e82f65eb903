import pycoll
import pycoll.distributed as dist
strategy = dist.Strategy()
strategy.sharding.enable = True
strategy.sharding.stage = 2
strategy.sharding.degree = 2
strategy.gradient_merge.enable = True
strategy.gradient_merge.k_steps = 2
strategy.gradient_merge.avg = False
strategy.pipeline.enable = True
strategy.pipeline.schedule_mode = "1F1B" # default is "1F1B"
strategy.pipeline.micro_batch_size = 2
