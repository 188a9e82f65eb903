import pycoll
import pycoll.distributed as dist
# Create a distributed attribute
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
# Call the function dtensor_from_fn with dist_attr parameter
d_tensor = dist.dtensor_from_fn(pycoll.ones, mesh, [dist.Replicate()], shape=[1])
print(d_tensor)
