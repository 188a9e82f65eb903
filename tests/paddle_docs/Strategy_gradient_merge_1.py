import pycoll
import pycoll.distributed as dist
strategy = dist.Strategy()
strategy.gradient_merge.enable = True
strategy.gradient_merge.k_steps = 2
strategy.gradient_merge.avg = True
