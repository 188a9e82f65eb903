import pycoll
print(pycoll.distributed.is_available())
