"""The kernel's caches cannot change a verdict (issue 13).

The kernel memoizes on hash-consed terms: the arithmetic oracle's answers (a polynomial
answered by its copy with the decision's temporaries renamed in order), a substitution's
results (shared with the substitution of an enclosing binder), the interned terms and
normal forms themselves. Each of these must be a pure function of its key: a decision
made first or after others, once or again, states the same theorem with the same
axioms, conditions and recorded choices.
"""
import json
import random
import subprocess
import sys
from pathlib import Path

from verigrad.kernel import IndexVar, SizeSym
from verigrad.kernel import sizes as S

ROOT = Path(__file__).resolve().parents[2]

# Each claim's decision, printed as data: the statement, the axioms, the conditions and
# the recorded choices, in the order given on the command line (by position in the
# showcase's list), each claim decided twice in a row (the second time on warm caches).
DECIDE = r"""
import json, sys
from verigrad.certify import showcase
from verigrad.kernel import Theorem, prove_equal
claims = showcase.proved_claims() + showcase.composite_ln_attention() + showcase.mutant_claims()
out = {}
for k in map(int, sys.argv[1:]):
    c = claims[k]
    runs = []
    for _ in range(2):
        th = prove_equal(c.lhs, c.rhs)
        runs.append([th.lhs.skey, th.rhs.skey, th.axioms(), sorted(x.kind + ":" + x.term.skey for x in th.conds),
                     repr(th.args[2])] if isinstance(th, Theorem) else ["failure", str(th)])
    out[c.name] = runs
print(json.dumps(out))
"""


def _decide(order):
    done = subprocess.run([sys.executable, "-c", DECIDE, *map(str, order)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_decision_does_not_depend_on_what_was_decided_before():
    from verigrad.certify import showcase
    count = len(showcase.proved_claims() + showcase.composite_ln_attention() + showcase.mutant_claims())
    order = list(range(count))
    forward, backward = _decide(order), _decide(order[::-1])
    assert forward.keys() == backward.keys() and len(forward) == count
    for name in forward:
        first, again = forward[name]
        assert first == again, f"{name}: decided again on warm caches, it states something else"
        assert first == backward[name][0], f"{name}: decided after the others, it states something else"


def _random_poly(rng, temps, others, sizes):
    p = S.as_poly(rng.randint(-3, 3))
    for _ in range(rng.randint(1, 4)):
        term = S.as_poly(rng.choice([-2, -1, 1, 1, 2]))
        for _ in range(rng.randint(1, 2)):
            term = term * S.Poly.sym(rng.choice(temps + others + sizes))
        p = p + term
    return p


def test_the_oracle_answers_a_polynomial_as_its_renamed_copy():
    """``nonneg`` with the renaming memo agrees with the oracle run on the polynomial
    itself (no renaming, an empty memo), on polynomials mixing a decision's temporaries
    with statement indices, canonical binders and sizes."""
    rng = random.Random(13)
    n, m = SizeSym("n"), SizeSym("m", 2)
    sizes = [n, m]
    others = [IndexVar("i", n), IndexVar("j", m * n), S.bound_index(1, 0, n), S.bound_index(2, 1, m)]
    polys = []
    for _ in range(400):
        temps = [S.fresh_index(rng.choice([n, m, n * m, n - 1])) for _ in range(rng.randint(1, 3))]
        polys.append(_random_poly(rng, temps, others, sizes))
    with_memo = [S.nonneg(p) for p in polys]
    assert [S.outside(p, n) for p in polys] == [S.nonneg(-p - 1) or S.nonneg(p - n) for p in polys]
    saved, renamed = dict(S._nonneg_cache), S._renamed
    try:
        S._nonneg_cache.clear()
        S._renamed = lambda p: p
        direct = [S.nonneg(p) for p in polys]
    finally:
        S._nonneg_cache.clear()
        S._nonneg_cache.update(saved)
        S._renamed = renamed
    assert with_memo == direct
    assert any(with_memo) and not all(with_memo)
