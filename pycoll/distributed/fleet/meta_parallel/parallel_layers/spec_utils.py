"""paddle's ``fleet.meta_parallel.parallel_layers.spec_utils`` path (``meta_parallel.spec_utils``)."""
from pycoll.distributed.fleet.meta_parallel.spec_utils import (LayerSpec, build_spec_layer, get_spec_layer,
                                                               import_spec_layer)

__all__ = ["LayerSpec", "build_spec_layer", "get_spec_layer", "import_spec_layer"]
