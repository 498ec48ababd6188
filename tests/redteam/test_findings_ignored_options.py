"""Red team (RT-32, helper R1; fixed): ``Symbol`` accepted options that make a
symbol's domain larger than the reals the kernel reasons about (or, for an integer,
one that includes 0) and drops them without a word, so ``verigrad verify`` reports a
theorem file proved whose statement is false for the symbol as declared
(``--no-cache``, exit 0).

Reproductions (each proved, exit 0)::

    $ cat logexp.py
    from verigrad.proof import *

    @apply
    def apply(x):
        return Equality(log(exp(x)), x)

    @prove
    def prove(Eq):
        x = Symbol.x(real=False)            # SymPy: x is not real
        Eq << apply(x)
        Eq << Eq[0].this.lhs.simplify()

    $ verigrad verify --no-cache --steps logexp.py
    logexp  proved
             Eq[0]  proved   log(exp(x)) = x

False at x = 2*pi*i: exp(2*pi*i) = 1, log(1) = 0. The same file with
``Symbol.x(complex=True)`` is refused ("complex symbols: Func in log(exp(x)); a proof over
C must use only ring operations", RT-16's check), but ``real=False`` is the default
``real=True`` overwritten and ignored (``make_symbol`` never reads ``real``), so x is
compiled as a real ``Var`` and no complex check runs.

- ``Symbol.x(extended_real=True)`` (or ``finite=False``): ``x - x = 0`` proved, false at
  x = oo (oo - oo is undefined; SymPy gives nan). ``make_symbol`` lists
  ``extended_real``, ``finite``, ``hermitian``, ``given``, ``random`` as known and drops
  them whatever their value.
- ``t = Symbol.t(real=True, domain=Interval(0, 1, integer=False))`` (a real in [0, 1]):
  any ``domain`` makes an integer symbol (``real=True`` and the Interval's
  ``integer=False`` ignored), here an index of {0, 1}, and
  ``Sum[i:2](KroneckerDelta(i, t)) = 1`` is proved: false at t = 1/2 (both deltas 0).
- ``n = Symbol.n(integer=True, nonnegative=True)`` used as a size: ``n/n = 1`` proved,
  false at n = 0 (0/0). ``nonnegative`` is read only for tensors; an integer symbol
  without a domain becomes a size >= 1 where it gives a shape. Declaring the same
  domain as ``domain=[0, oo]`` is refused ("size symbol n ranges from 0; a size is at
  least 1"), so the tool knows n = 0 is not a size: the option form loses it silently.

Root: ``verigrad/proof/expressions/symbols.py`` (``make_symbol``): ``real``,
``nonnegative``/``nonzero`` (for integers), ``real`` with a ``domain``, and the "known"
extra options are accepted and not acted on. Fix direction: refuse (ProofError) an option whose value widens the
domain beyond what the symbol is compiled as (``real=False``, ``extended_real=True``,
``finite=False``, ``hermitian`` without ``complex``, ``nonnegative``/``nonzero`` on an
integer that becomes a size, a real symbol with a domain; ``Interval(..., integer=False)``
in ``domains.py``), or treat ``real=False`` as ``complex=True``.

Fixed: ``make_symbol`` refuses (ProofError, the file fails) every option that widens the
domain past what the symbol is compiled as, naming the option; options that only narrow
it (``hermitian``, ``given``, ``random``) may still be dropped, since a statement proved for
every real holds for those. An integer declared ``nonnegative`` may index an axis but not
give a size; one declared ``nonzero`` without a domain is refused.
"""
import pytest

from _verify_files import own_cache, verify

BODY = '''
from verigrad.proof import *


@apply
def apply(x):
    return Equality({lhs}, {rhs})


@prove
def prove(Eq):
    {decl}
    Eq << apply(x)
{steps}'''


def _file(tmp_path, name, lhs, rhs, decl, steps=()):
    path = tmp_path / f"{name}.py"
    path.write_text(BODY.format(lhs=lhs, rhs=rhs, decl=decl, steps="".join(f"    Eq << {s}\n" for s in steps)))
    return path


def test_the_statements_are_false():
    import cmath
    import math
    z = 2j * math.pi                                 # not real
    assert abs(cmath.log(cmath.exp(z)) - z) > 1      # log(exp(z)) = 0 != z
    assert math.isnan(math.inf - math.inf)           # x - x at x = oo


def test_complex_true_is_refused(tmp_path, monkeypatch):
    """The control: the supported way to say 'not real' is refused for this statement."""
    own_cache(tmp_path, monkeypatch)
    path = _file(tmp_path, "logexp_c", "log(exp(x))", "x", "x = Symbol.x(complex=True)",
                 ["Eq[0].this.lhs.simplify()"])
    assert verify(path).status != "proved"


def test_real_false_is_not_read_as_real(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = _file(tmp_path, "logexp_nr", "log(exp(x))", "x", "x = Symbol.x(real=False)",
                 ["Eq[0].this.lhs.simplify()"])
    rec = verify(path)
    assert rec.status == "failed" and "real=False" in rec.reason, (rec.status, rec.reason)


def test_extended_real_is_not_read_as_real(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = _file(tmp_path, "xminusx_er", "x - x", "0", "x = Symbol.x(extended_real=True)")
    rec = verify(path)
    assert rec.status == "failed" and "extended_real=True" in rec.reason, (rec.status, rec.reason)


def test_finite_false_is_not_read_as_real(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = _file(tmp_path, "xminusx_inf", "x - x", "0", "x = Symbol.x(finite=False)")
    rec = verify(path)
    assert rec.status == "failed" and "finite=False" in rec.reason, (rec.status, rec.reason)


def test_a_nonnegative_integer_is_not_a_size_from_one(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "n_over_n.py"
    path.write_text(BODY.replace("apply(x)", "apply(n)").format(
        lhs="n / n", rhs="1",
        decl="n = Symbol.n(integer=True, nonnegative=True)\n    x = Symbol.x(shape=(n,), real=True)",
        steps="    Eq << Eq[0].this.lhs.simplify()\n"))
    rec = verify(path)
    assert rec.status == "failed" and "nonnegative" in rec.reason, (rec.status, rec.reason)


def test_domain_zero_to_oo_is_refused(tmp_path, monkeypatch):
    """The control: the same domain written as ``domain=[0, oo]`` is refused."""
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "n_over_n_dom.py"
    path.write_text(BODY.replace("apply(x)", "apply(n)").format(
        lhs="n / n", rhs="1", decl="n = Symbol.n(domain=[0, oo], integer=True)",
        steps="    Eq << Eq[0].this.lhs.simplify()\n"))
    assert verify(path).status != "proved"


def test_a_real_interval_domain_is_not_an_integer_range(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "delta_t.py"
    body = BODY.replace("apply(x)", "apply(t)")
    body = body.replace("def apply(t):", "def apply(t):\n    i = Symbol.i(integer=True)")
    path.write_text(body.format(
        lhs="Sum[i:2](KroneckerDelta(i, t))", rhs="1",
        decl="t = Symbol.t(real=True, domain=Interval(0, 1, integer=False))",
        steps="    Eq << Eq[0].this.lhs.simplify()\n"))
    rec = verify(path)
    assert rec.status == "failed" and "real symbol" in rec.reason, (rec.status, rec.reason)


@pytest.mark.parametrize("decl", ["x = Symbol.x(real=True, finite=True)", "x = Symbol.x(hermitian=True)",
                                  "x = Symbol.x(extended_real=False, complex=True)",
                                  "x = Symbol.x(real=False, complex=True)"])
def test_options_that_only_narrow_the_domain_still_prove(tmp_path, monkeypatch, decl):
    """The neighbours: a finite real, a hermitian (real) scalar, a non-real complex x: x - x = 0
    holds for each, and each is a subset of what the symbol is compiled as."""
    own_cache(tmp_path, monkeypatch)
    path = _file(tmp_path, "xminusx_ok", "x - x", "0", decl)
    rec = verify(path)
    assert rec.status == "proved", (rec.status, rec.reason)


def test_a_nonnegative_integer_may_index_an_axis(tmp_path, monkeypatch):
    """0 <= i is what an index of an axis is: ``x[i] - x[i] = 0`` still proves."""
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "index_nonneg.py"
    path.write_text(BODY.replace("apply(x)", "apply(x, i)").replace("def apply(x):", "def apply(x, i):").format(
        lhs="x[i] - x[i]", rhs="0",
        decl="n = Symbol.n(domain=[1, oo], integer=True)\n    x = Symbol.x(shape=(n,), real=True)\n"
             "    i = Symbol.i(integer=True, nonnegative=True)", steps=""))
    rec = verify(path)
    assert rec.status == "proved", (rec.status, rec.reason)


def test_an_integer_interval_domain_is_still_an_index(tmp_path, monkeypatch):
    """``Interval(0, 1)`` (integer by default) still declares an index of {0, 1}."""
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "delta_i.py"
    body = BODY.replace("apply(x)", "apply(t)")
    body = body.replace("def apply(t):", "def apply(t):\n    i = Symbol.i(integer=True)")
    path.write_text(body.format(lhs="Sum[i:2](KroneckerDelta(i, t))", rhs="1",
                                decl="t = Symbol.t(domain=Interval(0, 1))",
                                steps="    Eq << Eq[0].this.lhs.simplify()\n"))
    rec = verify(path)
    assert rec.status == "proved", (rec.status, rec.reason)


def test_integer_false_with_a_domain_is_refused(tmp_path, monkeypatch):
    """``integer=False`` says t is not an integer; a domain would make it one."""
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "delta_t2.py"
    body = BODY.replace("apply(x)", "apply(t)")
    body = body.replace("def apply(t):", "def apply(t):\n    i = Symbol.i(integer=True)")
    path.write_text(body.format(lhs="Sum[i:2](KroneckerDelta(i, t))", rhs="1",
                                decl="t = Symbol.t(integer=False, domain=[0, 1])",
                                steps="    Eq << Eq[0].this.lhs.simplify()\n"))
    rec = verify(path)
    assert rec.status == "failed" and "real symbol" in rec.reason, (rec.status, rec.reason)
