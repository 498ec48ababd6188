"""A small CNN for 8x8x1 images, built from certified pieces with verigrad.nn.builder.

conv 3x3 -> relu -> max pool -> a residual block with a drop-path site
(conv -> relu -> conv, ``x + s * f(x)``) -> flatten -> dense head.

(``Relu(), MaxPool()`` is built as ``MaxPool(), Relu()``, the same function. There is no
max pool after the block: one over the block's output would tie on a set of positive
measure, where the block's relus are all off and its output is the same constant at
neighbouring positions, and the certificate would say nothing there; such a network is
refused, with the condition named. Nor is there a relu after the block: where the site
drops the block (``s = 0``) its output is the first relu's, and a relu of relu outputs
has its kink on the set of positive measure where they are 0.)

Its backward is certified for every batch size when this file is loaded; a piece
without a certificate, or shapes that do not fit, would stop it with one line.

    verigrad render examples/own_network/net.py:net --out build/own
    verigrad train examples/own_network/net.py:net --data train.npz --test test.npz
"""
from verigrad.nn import builder as nb


def cnn(width: int = 16, name: str = "own_cnn"):
    return nb.network(name, [
        nb.Conv(width), nb.Relu(), nb.MaxPool(),
        nb.Residual(nb.Conv(width), nb.Relu(), nb.Conv(width), drop_path=True, name="block"),
        nb.Head(pool="flatten"),
    ], input=(8, 8, 1), classes=10)


net = cnn(16)
small = cnn(4, "own_cnn_small")      # the tests train this one
