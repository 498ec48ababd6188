"""Red team RT-31 (fixed: a binder makes each limit's symbol an index of exactly its
range, however it is written): a binder built with its constructor,
``Sum(body, [(i, size)])``, sums over the symbol's own domain and ignores the stated
size, so ``verigrad verify`` reports a false theorem file proved (``--no-cache``, exit 0).

Reproduction::

    $ cat limits.py
    from verigrad.proof import *

    @apply
    def apply(x, n):
        i = Symbol.i(integer=True, domain=[0, n - 1])
        return Equality(Sum(x[i], [(i, 1)]), Sum(x[i], [(i, 2)]))

    @prove
    def prove(Eq):
        n = Symbol.n(domain=[2, oo], integer=True)
        x = Symbol.x(shape=(n,), real=True)
        Eq << apply(x, n)

    $ verigrad verify --no-cache --steps limits.py      # exit 0
    limits  proved
             Eq[0]  proved   Sum[i:1](x[i]) = Sum[i:2](x[i])

The statement shown (and written) is ``x[0] = x[0] + x[1]``: false at n = 2, x = [0, 1]
(0 against 1). Both sides compile to the same kernel term ``Sum_{i < n} x[i]`` (the
domain of ``i``), so reflexivity proves it, with no axiom.

Root cause: ``verigrad/proof/expressions/binders.py``. Only ``Binder.make`` (the
``Sum[i:n](...)`` syntax) runs ``_bind_symbols``, which rebinds a limit's symbol to an
index of exactly the limit's size; ``Binder.__init__`` (the exported class called
directly) keeps the given symbol, and ``Binder.bind`` compiles with ``s.sym`` (the
symbol's own index variable, of its declared domain) rather than the limit's size, while
``_data``, ``shape`` and the text use the limit's size.
"""
import numpy as np
import pytest

from _verify_files import own_cache, verify

BODY = '''
from verigrad.proof import *


@apply
def apply(x, n):
    i = Symbol.i(integer=True, domain=[0, n - 1])
    return Equality(Sum(x[i], [(i, 1)]), Sum(x[i], [(i, 2)]))


@prove
def prove(Eq):
    n = Symbol.n(domain=[2, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x, n)
'''


def test_the_statement_is_false():
    x = np.array([0.0, 1.0])            # n = 2
    assert x[:1].sum() != x[:2].sum()


def test_a_limit_size_other_than_the_domain_is_not_ignored(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "limits.py"
    path.write_text(BODY)
    assert verify(path).status != "proved", "Sum[i:1](x[i]) = Sum[i:2](x[i]) reported proved"
