import pycoll
import pycoll.distributed as dist
strategy = dist.Strategy()
strategy.amp.enable = True
strategy.amp.dtype = "float16"
strategy.amp.level = "O2"
