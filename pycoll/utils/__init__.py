"""``paddle.utils``'s pieces that scripts use: `dlpack`, `run_check`, `try_import`, `deprecated`
and `require_version`."""
from pycoll.utils import dlpack
from pycoll.utils import unique_name
from pycoll.utils.deprecated import deprecated
from pycoll.utils.install_check import run_check
from pycoll.utils.lazy_import import try_import
from pycoll.utils.version_check import require_version

__all__ = ["dlpack", "unique_name", "run_check", "deprecated", "require_version", "try_import"]
