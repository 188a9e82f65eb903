"""``paddle.utils``'s pieces that scripts use: `dlpack`, `run_check`, `try_import`, `deprecated`,
`require_version` and the nested-structure helpers (`flatten`, `map_structure`,
`pack_sequence_as`, `is_sequence`, and outside ``__all__`` as in paddle `assert_same_structure`,
`to_sequence`, `hold_mutable_vars`, `copy_mutable_vars`: paddle's ``layers_utils``)."""
from pycoll._nest import (assert_same_structure, copy_mutable_vars, flatten,  # noqa: F401
                          hold_mutable_vars, is_sequence, map_structure, pack_sequence_as, to_sequence)
from pycoll.utils import dlpack
from pycoll.utils import unique_name
from pycoll.utils.deprecated import deprecated
from pycoll.utils.install_check import run_check
from pycoll.utils.lazy_import import try_import
from pycoll.utils.version_check import require_version

__all__ = ["dlpack", "unique_name", "run_check", "deprecated", "require_version", "try_import", "flatten",
           "is_sequence", "map_structure", "pack_sequence_as"]
