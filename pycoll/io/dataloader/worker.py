"""paddle.io.dataloader.worker: what code in a DataLoader worker asks about itself."""
from pycoll.io.workers import WorkerInfo, get_worker_info

__all__ = ["WorkerInfo", "get_worker_info"]
