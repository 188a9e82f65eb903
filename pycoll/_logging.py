"""The library logger, ``logging.getLogger("pycoll")``; ``PYCOLL_LOG_LEVEL`` sets its level."""
import logging
import os

logger = logging.getLogger("pycoll")
_level = os.environ.get("PYCOLL_LOG_LEVEL")
if _level:
    logger.setLevel(_level.upper())
