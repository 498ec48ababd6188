"""Red team RT-49-d (helper-17, fixed): the claims are proved about the function as JAX
traces it at symbolic sizes, and translation validation compared that import with JAX
numerically at sampled sizes and inputs only. Code that takes another path at concrete
shapes and differs there only far out passed:

    def bwd(x, g):
        if all(isinstance(d, int) for d in g.shape):     # concrete shapes only
            g = jnp.clip(g, -1e5, 1e5)
        return (3.0 * g,)
    f = custom_vjp(lambda x: 3 * x) with bwd              -> PROVED (JAX gives 3e5 at g = 1e6)

Now the functions are imported again at one concrete size assignment (each size its own
value) and the kernel must prove each imported tensor equal to the symbolic import's at
those sizes (``verigrad/certify/exact_sizes.py``); otherwise the import is refused.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad
from verigrad.certify.exact_sizes import assignment
from _pairs import custom_vjp as _vjp


def _clipping_at_concrete_shapes(x, g):
    if all(isinstance(d, int) for d in g.shape):
        g = jnp.clip(g, -1e5, 1e5)
    return (3.0 * g,)


def test_rt49d_the_concrete_path_clips():
    f = _vjp(lambda x: 3.0 * x, _clipping_at_concrete_shapes)
    got = jax.vjp(f, jnp.ones(2))[1](jnp.full(2, 1e6))[0]
    assert np.allclose(got, 3e5)


def test_rt49d_a_path_taken_only_at_concrete_shapes_is_not_proved():
    cert = verigrad.certify(_vjp(lambda x: 3.0 * x, _clipping_at_concrete_shapes), shapes={"x": "n, d"})
    assert cert.status == "UNKNOWN", cert.status
    assert "another path at concrete shapes" in cert.detail and "cotangent of x" in cert.detail, cert.detail


def test_rt49d_a_forward_taking_another_path_is_not_proved():
    def fwd(x):
        y = 3.0 * x
        return jnp.where(y > 1e5, 0.0, y) if all(isinstance(d, int) for d in x.shape) else y
    cert = verigrad.certify(_vjp(fwd, lambda x, g: (3.0 * g,)), shapes={"x": "n"})
    assert cert.status == "UNKNOWN" and "another path at concrete shapes" in cert.detail, cert.detail


def test_rt49d_the_same_function_at_every_shape_still_proves():
    def softmax_fwd(x):
        return jax.nn.softmax(x, axis=-1)

    def softmax_bwd(x, g):
        y = jax.nn.softmax(x, axis=-1)
        return (y * (g - jnp.sum(g * y, axis=-1, keepdims=True)),)
    cert = verigrad.certify(_vjp(softmax_fwd, softmax_bwd), shapes={"x": "n, d"})
    assert cert.status == "PROVED", cert.detail


def test_rt49d_each_size_gets_its_own_value():
    """A swapped pair of sizes (n for d) shows at the concrete assignment."""
    def bwd(x, g):
        return (g.T.reshape(x.shape) if all(isinstance(d, int) for d in x.shape) else g,)
    cert = verigrad.certify(_vjp(lambda x: x, bwd), shapes={"x": "n, d"})
    assert cert.status == "UNKNOWN", cert.status


def test_rt49d_the_sizes_are_distinct_above_their_lower_bounds():
    from types import SimpleNamespace
    from verigrad.kernel import Var
    from verigrad.kernel.sizes import Poly, SizeSym
    n, d, k = SizeSym("n"), SizeSym("d", 3), SizeSym("k", 2)
    x = Var("x", (Poly.sym(n), Poly.sym(d), Poly.sym(k) + 1))
    got = assignment(SimpleNamespace(args=[(None, x)]))
    assert got == {d: 3, k: 4, n: 5}
    assert assignment(SimpleNamespace(args=[(None, Var("s"))])) == {}
