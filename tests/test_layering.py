"""DESIGN.md's layers, enforced on the source: which part of the package may import which, and no
import circle anywhere (imports inside functions count: they run, and they tie modules together).

    base (errors, logging)                            -> nothing
    kernels (pycoll.kernels, pycoll._C), device       -> base
    backends (pycoll.backends)                        -> base
    tensor side (Tensor, autograd, nn, optimizer...)  -> kernels, device, base
    distributed (pycoll.distributed)                  -> backends, kernels, device, base
    parallel and data (pycoll.parallel, pycoll.io,    -> everything above but the tools
      pycoll.distributed.fleet, .sharding, .dataset, .utils)
    tools (pycoll.bench, pycoll.launch, pycoll.info,  -> anything
           pycoll.distributed.launch)
The faces of the package (``pycoll/__init__.py``), of nn (``pycoll/nn/__init__.py``, whose
SyncBatchNorm lives in pycoll.parallel), of the device API (``pycoll/device/__init__.py``, whose
generator controls and typed tensors live in the tensor layer) and of the distributed layer
(``pycoll/distributed/__init__.py``) and of incubate (``pycoll/incubate/__init__.py``, whose
``distributed`` subpackage, the MoE layer, is distributed-side) and of text (``pycoll/text/__init__.py``,
whose datasets are parallel-side) and of sparse.nn (``pycoll/sparse/nn/__init__.py``, whose SyncBatchNorm
lives in pycoll.parallel) may name what lies above them, but only lazily (inside a
function): their eager imports obey the layers, and their lazy ones are left out of the circle check.
"""
import ast
from pathlib import Path
from typing import Dict, List, Set

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pycoll"

LAYERS = [  # (name, module prefixes), lowest first
    ("base", ("pycoll._errors", "pycoll._logging", "pycoll._printing", "pycoll._atomic_files", "pycoll._batch_files",
              "pycoll._pids", "pycoll._module_paths", "pycoll._blas_threads")),
    ("kernels", ("pycoll.kernels", "pycoll._C")),
    ("device", ("pycoll.device",)),
    ("backends", ("pycoll.backends",)),
    ("tensor", ("pycoll.tensor", "pycoll.autograd", "pycoll.math_ops", "pycoll.shape_ops",
                "pycoll.creation", "pycoll.random", "pycoll.serialization", "pycoll.paddle_files", "pycoll.nn",
                "pycoll.optimizer", "pycoll._tensor_ops", "pycoll._graph", "pycoll._versions", "pycoll.static",
                "pycoll._complex_grads", "pycoll._fp_quiet",
                "pycoll.complex_ops", "pycoll._scalar_axis",
                "pycoll.stack_ops", "pycoll.jit", "pycoll.inference", "pycoll.creation_options",
                "pycoll._promotion", "pycoll.elementwise_ops", "pycoll.reduce_ops", "pycoll.search_ops",
                "pycoll.grad_ops", "pycoll.regularizer", "pycoll.amp", "pycoll.dtypes", "pycoll.metric", "pycoll.linalg",
                "pycoll.einsum_ops", "pycoll.inplace_ops", "pycoll._special", "pycoll.unary_ops",
                "pycoll.binary_ops", "pycoll.logic_ops", "pycoll.index_ops", "pycoll.stats_ops", "pycoll.order_ops",
                "pycoll.scan_ops", "pycoll.reshape_ops", "pycoll.diag_ops", "pycoll.product_ops",
                "pycoll.sampling", "pycoll.framework", "pycoll.bit_operators", "pycoll.tensor_methods",
                "pycoll.aliases", "pycoll.type_info", "pycoll.index_writes", "pycoll.matrix_ops",
                "pycoll.special_ops", "pycoll.linalg_decomp", "pycoll.linalg_solve", "pycoll.linalg_matrix_functions",
                "pycoll._param_aliases", "pycoll.fft", "pycoll._higher_order", "pycoll.jacobians",
                "pycoll.incubate", "pycoll.utils", "pycoll._nest",
                "pycoll.creation_extras", "pycoll.torch_style_arith", "pycoll.runtime_config", "pycoll._paddle_flags",
                "pycoll.inplace_forms", "pycoll.inplace_random", "pycoll.window_split_ops", "pycoll.tensor_storage",
                "pycoll.version", "pycoll.size", "pycoll.tensor_data", "pycoll.torch_forms",
                "pycoll.extra_math", "pycoll.bessel_ops", "pycoll.incomplete_gamma", "pycoll.histogram_ops",
                "pycoll.linalg_householder", "pycoll.linalg_lowrank",
                "pycoll.profiler",
                "pycoll.device_random", "pycoll.typed_tensors",
                "pycoll.distribution",
                "pycoll.inplace_logic", "pycoll.inplace_distributions", "pycoll.tensor_kind", "pycoll.dense_tensor",
                "pycoll.tensor_method_aliases", "pycoll.strided_views", "pycoll.geometric",
                "pycoll.signal", "pycoll._saved_tensors_hooks", "pycoll._sparse_rows", "pycoll._py_layer_backward",
                "pycoll.audio", "pycoll.sampling_counts", "pycoll.inplace_names",
                "pycoll.autocast", "pycoll.batch_reader", "pycoll.as_tensor_op", "pycoll.text",
                "pycoll.sparse", "pycoll.tensor_sparse",
                "pycoll.cuda", "pycoll.special", "pycoll.sysconfig", "pycoll.hub", "pycoll.onnx",
                "pycoll.compat", "pycoll.tensor_namespace", "pycoll.tensor_legacy", "pycoll.quantization")),
    ("distributed", ("pycoll.distributed", "pycoll.distributed.rpc")),
    ("parallel", ("pycoll.parallel", "pycoll.distributed.parallel", "pycoll.io", "pycoll.distributed.fleet",
                  "pycoll.distributed.sharding",
                  "pycoll.distributed.dataset", "pycoll.distributed.auto_parallel",
                  "pycoll.distributed.checkpoint", "pycoll.distributed.utils", "pycoll.hapi", "pycoll.callbacks",
                  "pycoll.distributed.fsdp", "pycoll.distributed.flex_checkpoint",
                  "pycoll.vision", "pycoll.incubate.distributed", "pycoll.text.datasets")),
    ("tools", ("pycoll.bench", "pycoll.launch", "pycoll.info", "pycoll.distributed.launch")),
]
BELOW = {"base", "kernels", "device"}  # what every layer above them may use
ALLOWED = {  # layer -> the layers it may import, besides itself
    "base": set(),
    "kernels": {"base"},
    "device": {"base"},
    "backends": {"base"},
    "tensor": BELOW,
    "distributed": BELOW | {"backends"},
    "parallel": BELOW | {"backends", "tensor", "distributed"},
    "tools": BELOW | {"backends", "tensor", "distributed", "parallel"},
}


def layer_of(module: str) -> str:
    """The layer of the longest prefix ``module`` falls under (pycoll.distributed.launch is a tool)."""
    found = [(len(p), name) for name, prefixes in LAYERS for p in prefixes
             if module == p or module.startswith(p + ".")]
    if not found:
        raise AssertionError(f"{module} belongs to no layer of tests/test_layering.py: add it")
    return max(found)[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(module: str, node: ast.AST, is_package: bool) -> List[str]:
    """The pycoll modules an import statement in ``module`` loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.startswith("pycoll")]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not target.startswith("pycoll"):
        return []
    found = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
    return found or [target]


def imports(module: str, eager_only: bool = False) -> Set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    nodes = tree.body if eager_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(m for m in resolve(module, node, path.name == "__init__.py")
                         if m != module and m != "pycoll")
    return found


FACES = {"pycoll": "tensor", "pycoll.nn": "tensor", "pycoll.distributed": "distributed",
         "pycoll.device": "device", "pycoll.incubate": "tensor", "pycoll.text": "tensor",
         "pycoll.sparse.nn": "tensor"}  # face -> its layer
GRAPH: Dict[str, Set[str]] = {m: imports(m, eager_only=m in FACES) for m in MODULES}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_only_from_its_layer_and_below(module):
    mine = FACES.get(module) or layer_of(module)
    wrong = sorted(t for t in GRAPH[module] if layer_of(t) not in ALLOWED[mine] | {mine})
    how = "at import time " if module in FACES else ""
    assert not wrong, f"{module} ({mine}) imports {how}{wrong} ({[layer_of(t) for t in wrong]})"


def strongly_connected(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Tarjan's components of ``graph`` with more than one module (or a module importing itself)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, ()):
            if succ not in graph:
                continue
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    assert strongly_connected(GRAPH) == []


def test_the_checker_sees_a_circle_and_a_layer_violation():
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer_of("pycoll.backends.nccl") == "backends" and "distributed" not in ALLOWED["backends"]
    assert "tensor" not in ALLOWED["distributed"] and "distributed" not in ALLOWED["tensor"]
