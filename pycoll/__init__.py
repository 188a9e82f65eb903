"""pycoll: collective communication for CuPy (NCCL) and NumPy (MPI) arrays, paddle-style."""
from pycoll._errors import CollectiveError

__version__ = "0.1.0"
