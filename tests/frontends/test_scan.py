"""``lax.scan`` in the jaxpr importer (``verigrad/frontends/jaxpr_scan.py``): at a concrete
length the loop is unrolled exactly (carries threaded through the steps, ``xs`` sliced
along axis 0, ``ys`` stacked, ``reverse`` honoured, consts and several carries), and
the import agrees with XLA; a custom VJP using scan is PROVED at that length and a wrong
one is never PROVED; a symbolic length, or one past the limit, is refused by name."""
import json
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import verigrad
from verigrad.certify.evaluate import concrete_shape, evaluate
from verigrad.cli import main
from verigrad.frontends import jaxpr_scan
from verigrad.frontends.jaxpr import ArgSpec, JaxprImportError, import_function


def agrees(fn, specs, sizes=(1, 3), seed=0, **sample):
    """Import ``fn`` and compare every output with XLA (where XLA's value is finite)."""
    imp = import_function(fn, specs)
    terms = [o.term() for o in imp.outputs]
    symbols = sorted({s for v in imp.variables for s in v.sizes}, key=lambda s: s.name)
    for k, size in enumerate(sizes):
        sz = {s: size for s in symbols}
        rng = np.random.default_rng(seed + k)
        vals, args = {}, []
        for spec, var in zip(specs, imp.variables):
            v = sample.get(spec.name, lambda shape, rng: rng.standard_normal(shape))(concrete_shape(var.shape, sz), rng)
            vals[var] = v
            args.append(v.astype(spec.dtype) if spec.dtype != "float" else v)
        with jax.enable_x64(True):
            want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        assert len(want) == len(terms)
        for j, (t, w) in enumerate(zip(terms, want)):
            w = np.asarray(w, dtype=np.float64)
            got = np.asarray(evaluate(t, sz, vals), dtype=np.float64)
            assert got.shape == w.shape, f"output {j}: shape {got.shape}, XLA {w.shape}"
            ok = np.isfinite(w)
            np.testing.assert_allclose(got[ok], w[ok], rtol=1e-9, atol=1e-9, err_msg=f"output {j} at {size}")
    return imp


def _cumsum(x):
    return lax.scan(lambda c, r: (c + r, c + r), jnp.zeros(x.shape[1:]), x)


def _cumprod(x):
    return lax.scan(lambda c, r: (c * r, c * r), jnp.ones(x.shape[1:]), x)


# -- the import agrees with XLA --------------------------------------------------------------

def test_cumulative_sum_and_product():
    agrees(lambda x: (_cumsum(x), _cumprod(x)), [ArgSpec("x", ("5", "d"))])


def test_reverse_scan_keeps_ys_at_their_xs_positions():
    def f(x):
        last, ys = lax.scan(lambda c, r: (c * 0.5 + r, c - r), jnp.zeros(x.shape[1:]), x, reverse=True)
        return last, ys
    agrees(f, [ArgSpec("x", ("4", "d"))])
    x = np.arange(8.0).reshape(4, 2)
    imp = import_function(lambda x: lax.scan(lambda c, r: (c + r, c), jnp.zeros(2), x, reverse=True)[1],
                          [ArgSpec("x", ("4", "2"))])
    got = evaluate(imp.outputs[0].term(), {}, {imp.variables[0]: x})
    np.testing.assert_array_equal(got, [[12, 15], [10, 12], [6, 7], [0, 0]])   # sums of the rows after each


def test_consts_several_carries_and_tuples_of_xs():
    def f(x, w, b):
        def body(carry, inp):
            h, s, k = carry
            r, q = inp
            h = jnp.tanh(h * w + r) + b      # w, b: consts of the scan
            return (h, s + h * q, k + 1), (h - s, k * 2)
        return lax.scan(body, (jnp.zeros(x.shape[1:]), jnp.zeros(x.shape[1:]), jnp.int32(0)), (x, x[:, ::-1]))
    agrees(f, [ArgSpec("x", ("3", "d")), ArgSpec("w", ("d",)), ArgSpec("b", ("d",))])
    closed = jax.make_jaxpr(f)(jnp.zeros((3, 2)), jnp.zeros(2), jnp.zeros(2))
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]
    assert eqn.params["num_consts"] >= 2 and eqn.params["num_carry"] == 3


def test_fori_loop_with_python_bounds_and_nested_scans():
    def fori(x):
        return lax.fori_loop(0, x.shape[0], lambda i, c: c * 2 + x[i], jnp.zeros(x.shape[1:]))

    def nested(x):
        def outer(c, r):
            c, _ = lax.scan(lambda d, e: (d * 0.5 + e, None), c, jnp.stack([r, -2 * r]))
            return c, c.sum()
        return lax.scan(outer, jnp.zeros(x.shape[1:]), x)
    agrees(fori, [ArgSpec("x", ("4", "d"))])
    agrees(nested, [ArgSpec("x", ("3", "d"))])


def test_length_zero_and_length_one():
    agrees(lambda x: _cumsum(x[:0]), [ArgSpec("x", ("3", "d"))])
    agrees(lambda x: _cumprod(x), [ArgSpec("x", ("1", "d"))])


def test_infinities_in_the_carry_keep_their_facts():
    """``log(c * c)`` is -inf where ``c = 0``: the stacked ys say so (XLA's -inf is not
    compared; an exp of it must not be read as a finite value)."""
    f = lambda x: lax.scan(lambda c, r: (c + r, jnp.log(c * c)), jnp.zeros(x.shape[1:]), x)  # noqa: E731
    agrees(f, [ArgSpec("x", ("3", "d"))])
    with pytest.raises(JaxprImportError, match="infinite"):
        import_function(lambda x: jnp.tanh(f(x)[1]), [ArgSpec("x", ("3", "d"))])


def test_a_long_scan_reads_its_steps_in_order():
    """128 steps, reverse: the entries are read step by step (no recursion through them all)."""
    agrees(lambda x: lax.scan(lambda c, r: (c + r, c), jnp.zeros(x.shape[1:]), x, reverse=True),
           [ArgSpec("x", ("128", "d"))], sizes=(2,))


# -- refusals ------------------------------------------------------------------------------------

def test_symbolic_length_is_refused_with_the_size_to_fix():
    with pytest.raises(JaxprImportError) as e:
        import_function(_cumsum, [ArgSpec("x", ("n", "d"))])
    msg = str(e.value)
    assert msg.startswith("scan at ") and "test_scan.py" in msg and "(_cumsum)" in msg
    assert "its length n is symbolic (a size of x)" in msg and "--shape x=4,d" in msg
    with pytest.raises(JaxprImportError, match=r"length n \+ 1 is symbolic.*--shape x=5,d"):
        import_function(_cumsum, [ArgSpec("x", ("n+1", "d"))])


def test_too_many_steps_are_refused():
    n = jaxpr_scan.MAX_STEPS + 1
    with pytest.raises(JaxprImportError, match=f"scan at .*a scan of {n} iterations is not unrolled"):
        import_function(_cumsum, [ArgSpec("x", (str(n), "d"))])
    nested = lambda x: lax.scan(lambda c, r: (_cumsum(jnp.broadcast_to(r, (200,) + r.shape))[0], None),  # noqa: E731
                                jnp.zeros(x.shape[1:]), x)[0]
    with pytest.raises(JaxprImportError, match="equations, more than"):
        import_function(nested, [ArgSpec("x", ("200", "d"))])


# -- custom VJPs using scan ---------------------------------------------------------------------

def _custom(fwd_fn, bwd):
    f = jax.custom_vjp(fwd_fn)
    f.defvjp(lambda *a: (fwd_fn(*a), a), bwd)
    return f


def _cumsum_ys(x):
    return _cumsum(x)[1]


def _reverse_cumsum(g, keep):
    return lax.scan(lambda c, r: (c + r, keep(c, r)), jnp.zeros(g.shape[1:]), g, reverse=True)[1]


def test_cumsum_by_scan_proved_at_a_concrete_length():
    good = _custom(_cumsum_ys, lambda res, g: (_reverse_cumsum(g, lambda c, r: c + r),))
    cert = verigrad.certify(good, shapes={"x": "4, d"})
    assert cert.status == "PROVED", cert.detail


@pytest.mark.parametrize("bwd", [
    lambda res, g: (_reverse_cumsum(g, lambda c, r: c),),        # off by one: the carry before this step
    lambda res, g: (lax.scan(lambda c, r: (c + r, c + r), jnp.zeros(g.shape[1:]), g)[1],),  # forward order
], ids=["off-by-one", "reversed-order"])
def test_wrong_cumsum_backwards_are_never_proved(bwd):
    cert = verigrad.certify(_custom(_cumsum_ys, bwd), shapes={"x": "4, d"})
    assert cert.status in ("REFUTED", "UNKNOWN"), cert.detail


def _recurrence(x, a):
    """h_t = a h_{t-1} + x_t (h_{-1} = 0), every h_t; ``a`` a const of the scan."""
    return lax.scan(lambda h, r: (a * h + r, a * h + r), jnp.zeros(x.shape[1:]), x)[1]


def _recurrence_bwd(shift):
    def bwd(res, g):
        x, a = res
        hs = _recurrence(x, a)
        prev = jnp.concatenate([jnp.zeros_like(hs[:1]), hs[:-1]], 0)

        def step(carry, inp):
            dh_next, da = carry
            gt, hp = inp
            dh = gt + a * dh_next
            return (dh, da + (dh_next if shift else dh) * hp), dh
        (_, da), dx = lax.scan(step, (jnp.zeros_like(a), jnp.zeros_like(a)), (g, prev), reverse=True)
        return dx, da
    return bwd


def test_linear_recurrence_backprop_through_time_proved():
    """Two carries, a const and tuple xs in the backward: PROVED at length 6."""
    cert = verigrad.certify(_custom(_recurrence, _recurrence_bwd(False)), shapes={"x": "6, d", "a": "d"})
    assert cert.status == "PROVED", cert.detail
    assert {k: v.status for k, v in cert.wrt.items()} == {"x": "PROVED", "a": "PROVED"}


def test_linear_recurrence_with_the_carry_off_by_one_is_refuted():
    cert = verigrad.certify(_custom(_recurrence, _recurrence_bwd(True)), shapes={"x": "4, d", "a": "d"})
    assert cert.status != "PROVED" and cert.wrt["a"].status in ("REFUTED", "UNKNOWN"), cert.detail
    assert cert.wrt["x"].status == "PROVED"


CLI_FILE = """
import jax
import jax.numpy as jnp
from jax import lax


def _cs(x):
    return lax.scan(lambda c, r: (c + r, c + r), jnp.zeros(x.shape[1:]), x)[1]


cumsum = jax.custom_vjp(_cs)
cumsum.defvjp(lambda x: (_cs(x), None),
              lambda _, g: (lax.scan(lambda c, r: (c + r, c + r), jnp.zeros(g.shape[1:]), g, reverse=True)[1],))
"""


def test_cli_proves_at_a_concrete_size_and_names_the_size_to_fix(tmp_path, capsys):
    f = tmp_path / "scanned.py"
    f.write_text(textwrap.dedent(CLI_FILE))
    assert main(["certify", f"{f}:cumsum", "--shape", "x=3,d", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "PROVED"
    assert main(["certify", f"{f}:cumsum", "--shape", "x=n,d", "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "UNKNOWN"
    assert "scan at " in out["detail"] and "scanned.py:8:" in out["detail"] and "--shape x=4,d" in out["detail"]
