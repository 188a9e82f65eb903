"""``paddle.hapi.logger.setup_logger``: a logger that writes to stdout on local rank 0 and, given
``output``, to a log file on every rank."""
from __future__ import annotations

import logging
import os
import sys
from typing import Optional, Union

from pycoll.hapi.callback_base import local_rank

_FORMAT = "%(asctime)s - %(name)s - %(levelname)s - %(message)s"


def setup_logger(output: Optional[str] = None, name: str = "hapi",
                 log_level: Union[int, str] = logging.INFO) -> logging.Logger:
    """The logger ``name`` at ``log_level``, not propagating to the root logger: a stdout handler
    on local rank 0 (once), and with ``output`` a file handler (``output`` itself when it ends
    in .txt or .log, else ``output/log.txt``; ``.rank<N>`` appended on other ranks)."""
    if output is not None and not isinstance(output, str):
        raise TypeError(f"setup_logger: output must be a str or None, got {type(output).__name__}")
    logger = logging.getLogger(name)
    logger.propagate = False
    logger.setLevel(log_level)
    rank = local_rank()
    if rank == 0 and not logger.handlers:
        stream = logging.StreamHandler(stream=sys.stdout)
        stream.setLevel(log_level)
        stream.setFormatter(logging.Formatter(_FORMAT))
        logger.addHandler(stream)
    if output is not None:
        filename = output if output.endswith((".txt", ".log")) else os.path.join(output, "log.txt")
        if rank > 0:
            filename += f".rank{rank}"
        os.makedirs(os.path.dirname(filename) or ".", exist_ok=True)
        handler = logging.FileHandler(filename)  # paddle passes the name to a StreamHandler, which cannot write
        handler.setLevel(log_level)
        handler.setFormatter(logging.Formatter(_FORMAT))
        logger.addHandler(handler)
    return logger
