import pycoll.distributed.fleet as fleet
fleet.init()
