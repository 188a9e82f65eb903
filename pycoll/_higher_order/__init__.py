"""Gradients that can be differentiated again: ``pycoll.grad(..., create_graph=True)``.

The ordinary walk (`pycoll._graph`) runs each node's backward function on raw arrays, outside the
graph. Here the walk (`walk.differentiable_grads`) runs, for each node, the same derivative written
with pycoll's Tensor ops instead: a *rule*. The gradients a rule returns are recorded like any
other result, so they can be differentiated in turn (second and higher orders: WGAN-GP's gradient
penalty, physics-informed losses, MAML's inner step, Hessians).

Rules are found by the qualified name of the node's backward function and read what the op kept
for its backward from that function's closure (`saved.Saved`), so the ops pay nothing for a
feature most programs never use. The rules live by subject: `rules_math` (arithmetic, unary maths,
reductions), `rules_shape` (reshape, transpose, indexing, concat, ...), `rules_nn` (linear,
matmul, activations, softmax, losses, norms) and `rules_recomputed` (convolutions, normalize,
layer_norm: their forwards recomputed from ops that have rules, then differentiated). A node
without a rule stops the walk with a NotImplementedError naming the op.
"""
from pycoll._higher_order import rules_extra, rules_math, rules_multilinear, rules_nn, rules_recomputed, rules_shape
from pycoll._higher_order.walk import differentiable_grads

# importing them registers their rules
RULE_MODULES = (rules_extra, rules_math, rules_multilinear, rules_nn, rules_recomputed, rules_shape)

__all__ = ["RULE_MODULES", "differentiable_grads"]
