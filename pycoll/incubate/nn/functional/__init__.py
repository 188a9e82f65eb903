"""``paddle.incubate.nn.functional``: the fused ops LLM code imports, composed of pycoll's
differentiable ops (NumPy arrays on the CPU, CuPy arrays on a GPU), with paddle 3.3.1's names,
signatures and return conventions.

Left out on purpose: paddle's kernels that exist only as quantised / fp8 / paged-cache GPU
inference paths (``fp8_*``, ``*_quant*``, ``fused_act_dequant``, ``block_multihead_attention``,
``masked_multihead_attention``, ``blha_get_max_len``, the ``moe_*`` dispatch/combine kernels,
``fused_multi_transformer``'s rotary / beam / prefix-cache extras...), which pycoll does not imitate."""
from pycoll.incubate.nn.functional.fused_bias_act import fused_bias_act
from pycoll.incubate.nn.functional.fused_dropout_add import fused_dropout_add
from pycoll.incubate.nn.functional.fused_matmul_bias import fused_linear, fused_linear_activation, fused_matmul_bias
from pycoll.incubate.nn.functional.fused_multi_transformer import fused_multi_transformer
from pycoll.incubate.nn.functional.fused_norms import (fast_ln, fast_rms_norm, fused_layer_norm, fused_rms_norm,
                                                       fused_rms_norm_ext)
from pycoll.incubate.nn.functional.fused_partial_rope import fused_partial_rope
from pycoll.incubate.nn.functional.fused_rotary_position_embedding import fused_rotary_position_embedding
from pycoll.incubate.nn.functional.fused_transformer import (fused_bias_dropout_residual_layer_norm,
                                                             fused_feedforward, fused_multi_head_attention)
from pycoll.incubate.nn.functional.swiglu import swiglu
from pycoll.incubate.nn.functional.variable_length_memory_efficient_attention import (
    variable_length_memory_efficient_attention)

__all__ = ["fused_rms_norm", "fused_layer_norm", "fused_rotary_position_embedding", "swiglu", "fused_bias_act",
           "fused_matmul_bias", "fused_linear", "fused_linear_activation", "fused_dropout_add",
           "fused_bias_dropout_residual_layer_norm", "fused_feedforward", "fused_multi_head_attention",
           "fused_multi_transformer", "variable_length_memory_efficient_attention", "fast_ln", "fast_rms_norm",
           "fused_rms_norm_ext", "fused_partial_rope"]
