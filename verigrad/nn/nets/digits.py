"""Convolutional and dense networks for 8x8x1 digit images (NHWC), 10 classes: an MLP,
a CNN (conv, max pool, relu; conv, average pool, relu; dense) and a tiny ResNet (basic
blocks, projection skips).
Each is a combinator tree over zoo layers, so its backward is the combinators'."""
from __future__ import annotations

from verigrad.nn import combinators as C
from verigrad.nn import layers as L

from .network import Network

IMAGE = (8, 8, 1)
CLASSES = 10


def mlp(batch, hidden=(128,), classes: int = CLASSES) -> Network:
    """flatten -> [dense -> relu] per hidden width -> dense head."""
    parts = [L.flatten((batch,) + IMAGE)]
    for i, width in enumerate(hidden):
        parts.append(C.named(f"fc{i + 1}", L.dense(parts[-1].y, width)))
        parts.append(L.relu(parts[-1].y))
    parts.append(C.named("head", L.dense(parts[-1].y, classes)))
    return Network("mlp", C.chain(*parts), classes=classes)


def cnn(batch, widths=(16, 32), classes: int = CLASSES) -> Network:
    """[conv3x3 (SAME) -> pool 2x2 -> relu] per width -> flatten -> dense head. The first
    pool takes maxima, the later ones average. (A max pool over relu outputs, or over a
    convolution of them, ties on a set of positive measure: where its inputs are all off,
    the entries it compares are the same constant, and the pool's theorem says nothing
    there, so such a network has no certificate for almost every input; red team RT15,
    ``verigrad.nn.almost_everywhere``. Pooling the first convolution's outputs before the
    relu is the same function as after it, and its ties are a null set.)"""
    parts, shape = [], (batch,) + IMAGE
    for i, width in enumerate(widths):
        conv = C.named(f"conv{i + 1}", L.conv2d(shape, width))
        pool = (L.max_pool if i == 0 else L.avg_pool)(conv.y)
        act = L.relu(pool.y)
        parts += [conv, pool, act]
        shape = act.y
    flat = L.flatten(shape)
    parts += [flat, C.named("head", L.dense(flat.y, classes))]
    return Network("cnn", C.chain(*parts), classes=classes)


def _conv_bn(name, x, width, k=3, stride=1):
    conv = C.named(name, L.conv2d(x, width, k=k, stride=stride, bias=False))
    return C.chain(conv, C.named(f"{name}_bn", L.batch_norm(conv.y)))


def basic_block(x, width, stride: int = 1):
    """``relu(main(x) + skip(x))`` with ``main = conv-bn-relu-conv-bn`` and the skip the
    identity, or a 1x1 stride-``s`` convolution + batch norm (the projection) when the
    shape changes."""
    first = _conv_bn("conv1", x, width, stride=stride)
    act = L.relu(first.y)
    main = C.chain(first, act, _conv_bn("conv2", act.y, width))
    if stride == 1 and x[3] == width:
        body = C.residual(main)
    else:
        body = C.fan_in(main, _conv_bn("proj", x, width, k=1, stride=stride))
    return C.chain(body, L.relu(body.y))


def resnet(batch, widths=(16, 32), classes: int = CLASSES) -> Network:
    """stem conv-bn-relu, one basic block per width (the first keeps the size with an
    identity skip; each later one halves it with a projection skip), global average
    pool, dense head."""
    stem = _conv_bn("stem", (batch,) + IMAGE, widths[0])
    parts = [stem, L.relu(stem.y)]
    for i, width in enumerate(widths):
        parts.append(C.named(f"block{i + 1}", basic_block(parts[-1].y, width, stride=1 if i == 0 else 2)))
    pool = L.global_avg_pool(parts[-1].y)
    parts += [pool, C.named("head", L.dense(pool.y, classes))]
    return Network("resnet", C.chain(*parts), classes=classes)
