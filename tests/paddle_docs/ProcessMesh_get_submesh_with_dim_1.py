import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
mesh_2d = dist.ProcessMesh([[0, 1, 2, 3], [4, 5, 6, 7]], dim_names=["dp", "tp"])
dp_mesh = mesh_2d.get_submesh_with_dim("dp")
# ProcessMesh:([0, 4]) on rank 0, 4
# ProcessMesh:([1, 5]) on rank 1, 5
# ProcessMesh:([2, 6]) on rank 2, 6
# ProcessMesh:([3, 7]) on rank 3, 7
tp_mesh = mesh_2d.get_submesh_with_dim("tp")
# ProcessMesh:([0, 1, 2, 3]) on rank 0, 1, 2, 3
# ProcessMesh:([4, 5, 6, 7]) on rank 4, 5, 6, 7
mesh_3d = dist.ProcessMesh([[[0, 1],[2, 3]], [[4, 5], [6, 7]]], dim_names=["pp","dp","tp"])
pp_mesh = mesh_3d.get_submesh_with_dim("pp")
# ProcessMesh:([0, 4]) on rank 0, 4
# ProcessMesh:([1, 5]) on rank 1, 5
# ProcessMesh:([2, 6]) on rank 2, 6
# ProcessMesh:([3, 7]) on rank 3, 7
dp_mesh = mesh_3d.get_submesh_with_dim("dp")
# ProcessMesh:([0, 2]) on rank 0, 2
# ProcessMesh:([1, 3]) on rank 1, 3
# ProcessMesh:([4, 6]) on rank 4, 6
# ProcessMesh:([5, 7]) on rank 5, 7
tp_mesh = mesh_3d.get_submesh_with_dim("tp")
# ProcessMesh:([0, 1]) on rank 0, 1
# ProcessMesh:([2, 3]) on rank 2, 3
# ProcessMesh:([4, 5]) on rank 4, 5
# ProcessMesh:([6, 7]) on rank 6, 7
