"""A small CNN for 8x8x1 images, built from certified pieces with verigrad.nn.builder.

conv 3x3 -> relu -> max pool -> a residual block with a drop-path site
(conv -> relu -> conv, ``x + s * f(x)``) -> relu -> max pool -> flatten -> dense head.

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
        nb.Relu(), nb.MaxPool(),
        nb.Head(pool="flatten"),
    ], input=(8, 8, 1), classes=10)


net = cnn(16)
small = cnn(4, "own_cnn_small")      # the tests train this one
