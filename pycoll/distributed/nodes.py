"""Several launchers, one per machine, forming one job (``python -m pycoll.launch --nnodes N
--node_rank R --master_addr HOST --master_port PORT``, torchrun's flags).

The launchers meet in a rendezvous store that node 0's launcher hosts at ``HOST:PORT``. Each
claims its node rank (a rank claimed twice is refused) and says at which address the others
reach its machine; node 0's launcher then starts the whole job through MPI's launcher with that
host list (``mpiexec -hosts h0:P,h1:P,...``): MPI starts the ranks of the other machines itself,
node after node, so global ranks are node-major and both backends work unchanged (the cpu
backend needs one MPI world; MPI's dynamic processes would have joined separate worlds at a
price in code and robustness). This is why every machine needs MPI's launcher to reach the
others (ssh, as for ``mpiexec -f hosts``); on one machine nothing is needed.

The other launchers stay until the job ends and exit with its status. They show that they are
alive through the store every second: one that stops for :data:`SILENT_S` seconds stops the job
(as a dead torchrun agent does), and node 0's launcher vanishing ends theirs.
"""
from __future__ import annotations

import socket
import threading
import time
from typing import Callable, List

from pycoll._errors import CollectiveError
from pycoll._logging import logger
from pycoll.distributed.store import TCPStore

BEAT_S = 1.0  # how often a launcher says it is alive
SILENT_S = 5.0  # a launcher silent this long has stopped: the job is stopped
_ACK_WAIT_S = 5.0  # how long node 0 keeps the store for the others to read the job's status


def reachable_address(master_addr: str, master_port: int) -> str:
    """This machine's address on the route to the master (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((master_addr, master_port))
            return probe.getsockname()[0]
        except OSError:
            return socket.gethostname()


class Meeting:
    """This launcher's part in the meeting of ``nnodes`` launchers (see the module's text)."""

    def __init__(self, nnodes: int, node_rank: int, master_addr: str, master_port: int,
                 nproc_per_node: int, timeout: float):
        self.nnodes, self.node_rank, self.timeout = nnodes, node_rank, timeout
        self.where = f"{master_addr}:{master_port}"
        self.store = TCPStore(master_addr, master_port, is_master=node_rank == 0, timeout=timeout)
        if self.store.add(f"node/{node_rank}/claims", 1) > 1:
            raise CollectiveError(f"--node_rank {node_rank} is already taken by another launcher "
                                  f"of the job at {self.where}; give each machine its own node rank")
        host = master_addr if node_rank == 0 else reachable_address(master_addr, master_port)
        self.store.set(f"node/{node_rank}/host", host.encode())
        self.store.set(f"node/{node_rank}/shape", f"{nnodes}x{nproc_per_node}".encode())
        self._shape = f"{nnodes}x{nproc_per_node}"

    def hosts(self) -> List[str]:
        """Node 0: every node's address in node order, once all have joined (within the timeout)
        with the same ``--nnodes`` and ``--nproc_per_node``."""
        deadline = time.monotonic() + self.timeout
        hosts, missing = [], []
        for rank in range(self.nnodes):
            try:
                hosts.append(self.store.get(f"node/{rank}/host", max(0.0, deadline - time.monotonic())).decode())
            except CollectiveError:
                missing.append(rank)
        if missing:
            raise CollectiveError(f"node(s) {missing} did not join the job at {self.where} within "
                                  f"{self.timeout:g} s (PYCOLL_TIMEOUT): start `python -m pycoll.launch "
                                  f"--nnodes {self.nnodes} --node_rank R ...` on each machine")
        for rank in range(1, self.nnodes):
            shape = self.store.get(f"node/{rank}/shape").decode()
            if shape != self._shape:
                raise CollectiveError(f"node {rank} was started with --nnodes x --nproc_per_node = "
                                      f"{shape}, node 0 with {self._shape}; start every node alike")
        return hosts

    def watch(self, stop: Callable[[str], None]) -> threading.Event:
        """Node 0, while the job runs: ``stop(reason)`` once another launcher falls silent. Set
        the returned event to end the watch."""
        done = threading.Event()

        def run() -> None:
            beats = {rank: (0, time.monotonic()) for rank in range(1, self.nnodes)}
            while not done.wait(BEAT_S):
                for rank, (seen, since) in beats.items():
                    count = self.store.add(f"node/{rank}/alive", 0)
                    if count != seen:
                        beats[rank] = (count, time.monotonic())
                    elif time.monotonic() - since > SILENT_S:
                        stop(f"the launcher of node {rank} has been silent for {SILENT_S:g} s "
                             f"(stopped or cut off); stopping the job")
                        return

        threading.Thread(target=run, name="pycoll-node-watch", daemon=True).start()
        return done

    def finish(self, status: int, reason: str = "") -> None:
        """Node 0: tell the others how the job ended, wait (briefly) until they have read it."""
        self.store.set("job/reason", reason.encode())
        self.store.add("job/exit", status + 1)
        deadline = time.monotonic() + _ACK_WAIT_S
        while self.store.add("job/seen", 0) < self.nnodes - 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        self.store.close()

    def follow(self) -> int:
        """Another node: stay alive until the job ends, then return its exit status."""
        while True:
            try:
                self.store.add(f"node/{self.node_rank}/alive", 1)
                status = self.store.add("job/exit", 0)
            except CollectiveError as exc:
                logger.error("the launcher of node 0 at %s is gone before the job ended: %s", self.where, exc)
                return 1
            if status:
                reason = self.store.get("job/reason").decode()
                self.store.add("job/seen", 1)
                self.store.close()
                if reason:
                    logger.error("%s", reason)
                return status - 1
            time.sleep(BEAT_S)


def job_hosts(hosts: List[str], per_node: int) -> List[str]:
    """MPI launcher arguments that place ``per_node`` ranks on each of ``hosts``, in order."""
    return ["-hosts", ",".join(f"{host}:{per_node}" for host in hosts)]
