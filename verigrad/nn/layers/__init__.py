"""The layer zoo: each layer a JAX forward and a hand-written backward (see ``core``
for the calling convention), grouped by family. ``zoo`` lists them with the sizes a
certifier traces them at and a realistic bug for each (the control)."""
from .activations import ACTIVATIONS, activation, gelu, relu, sigmoid, silu, tanh
from .conv import conv2d, depthwise_conv2d
from .core import (AuxSpec, Init, Layer, ParamSpec, constant, glorot_uniform, he_normal,
                   init_params, normal, ones, scale_examples, zeros)
from .affine import bias, dense, layer_scale
from .drop import drop_path, dropout, keep_mask
from .norms import batch_norm, layer_norm, rms_norm
from .numerics import float32_error, random_inputs
from .pool import avg_pool, global_avg_pool, max_pool
from .shape import flatten, take_token
from .logits import log_softmax, smooth_labels, softmax, softmax_xent
from .transformer import mhsa, patch_embed, transformer_mlp

__all__ = [
    "ACTIVATIONS", "AuxSpec", "Init", "Layer", "ParamSpec", "activation", "avg_pool",
    "batch_norm", "bias", "constant", "conv2d", "dense", "depthwise_conv2d", "drop_path",
    "dropout", "flatten", "float32_error", "gelu", "global_avg_pool", "glorot_uniform", "he_normal",
    "init_params", "keep_mask", "layer_norm", "layer_scale", "log_softmax", "max_pool",
    "mhsa", "normal", "ones", "patch_embed", "random_inputs", "relu", "rms_norm", "scale_examples",
    "sigmoid", "silu", "smooth_labels", "softmax", "softmax_xent", "take_token", "tanh",
    "transformer_mlp", "zeros",
]
