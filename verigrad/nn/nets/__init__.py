"""Networks for 8x8x1 digit images, 10 classes: MLP, CNN, tiny ResNet, ViT. Each is a
``Network``: a combinator tree over zoo layers, its parameter list (shapes,
initializers, weight decay), its drop-path sites, forward and backward."""
from .digits import basic_block, cnn, mlp, resnet
from .network import Network
from .vit import CONTROLS, block_backward, block_forward, keep_ramp, vit, vit_block, vit_block_flat

# name -> builder(batch, **options)
NETS = {"mlp": mlp, "cnn": cnn, "resnet": resnet, "vit": vit}

__all__ = ["CONTROLS", "NETS", "Network", "basic_block", "block_backward", "block_forward", "cnn",
           "keep_ramp", "mlp", "resnet", "vit", "vit_block", "vit_block_flat"]
