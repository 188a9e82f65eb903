"""paddle's ``fleet.layers`` path: ``fleet.layers.mpu`` holds the model-parallel layers."""
from pycoll.distributed.fleet.layers import mpu

__all__ = ["mpu"]
