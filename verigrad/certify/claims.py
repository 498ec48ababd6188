"""The claims of a certificate as kernel equations, and how they are proved (untrusted:
the kernel checks every step).

Most claims are ``got = expected`` with ``expected`` a transpose-Jacobian product in
``vjp_statement`` form, decided by ``prove_equal``. Two readings need the derivative to
be taken *before* a substitution:

* ``stop_gradient(t)`` with JAX's meaning: the forward holds a fresh variable ``s`` for
  ``t``, the derivative holds ``s`` fixed, and ``s := t(x)`` afterwards;
* a precondition on a differentiated argument (``sum(t, -1) == 1``): the derivative is
  taken in ``t`` over the whole space, then evaluated at ``t := R(T)``, the
  reparametrization whose values are exactly the points satisfying it.

The kernel states this as ``At(V, params, values)`` (``V`` the VJP with the params free,
evaluated after differentiating), and normalizes an ``At`` by plain substitution, which
it refuses where a derivative is taken in (or through) a param. So such a claim is proved
in three kernel steps, through a derivative-free form ``G`` of ``V`` (its normal form,
read back as a term, which the kernel re-checks):

    th1 = prove_equal(V, G)                      |- V = G            (params free)
    th2 = rewrite(th1, At(V, ps, vs))            |- At(V, ps, vs) = At(G, ps, vs)
    th3 = prove_equal(got, At(G, ps, vs))        |- got = At(G, ps, vs)   (G has no derivative)
    trans(th3, symm(th2))                        |- got = At(V, ps, vs)

``rewrite`` uses ``th1`` inside the ``At`` at the point ``ps := vs``, carrying its side
conditions there; nothing here is trusted.
"""
from __future__ import annotations

from dataclasses import dataclass

from verigrad.kernel import At, Failure, KernelError, Theorem, prove_equal, rewrite, symm, trans
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly


@dataclass
class Claim:
    """One claim: ``label`` ('forward output k' or an argument name), ``what`` (in words),
    ``got = expected``; ``body``/``params``/``values`` when ``expected`` is
    ``At(body, params, values)``."""
    label: str
    what: str
    got: T.Term
    expected: T.Term
    body: T.Term | None = None
    params: tuple = ()
    values: tuple = ()
    _plain: T.Term | None = None

    @property
    def staged(self) -> bool:
        return bool(self.params)

    def plain(self, budget=None) -> T.Term:
        """A term equal to ``expected`` without derivatives taken through a param (for
        numeric evaluation): ``G`` with the values substituted; ``expected`` itself when
        there is nothing to stage."""
        if not self.staged:
            return self.expected
        if self._plain is None:
            self._plain = T.subst(derivative_free(self.body, budget), dict(zip(self.params, self.values)))
        return self._plain


def make(label: str, what: str, got: T.Term, body: T.Term, params=(), values=()) -> Claim:
    """A claim ``got = At(body, params, values)`` (``got = body`` without params)."""
    params, values = tuple(params), tuple(values)
    if not params:
        return Claim(label, what, got, body)
    return Claim(label, what, got, At(body, params, values), body, params, values)


def prove(claim: Claim, budget=None):
    """A kernel Theorem ``got = expected``, or a Failure."""
    if not claim.staged:
        return prove_equal(claim.got, claim.expected, budget=budget)
    try:
        G = derivative_free(claim.body, budget)
    except KernelError as e:
        return Failure(f"the derivative could not be normalized: {e}")
    th1 = prove_equal(claim.body, G, budget=budget)
    if not isinstance(th1, Theorem):
        return th1
    at_g = At(G, claim.params, claim.values)
    th3 = prove_equal(claim.got, at_g, budget=budget)
    if not isinstance(th3, Theorem):
        return th3
    th2 = rewrite(th1, claim.expected)
    if th2.rhs is not at_g:
        return Failure("internal: the derivative-free form did not replace the derivative inside At")
    return trans(th3, symm(th2))


# -- the derivative-free form (untrusted; the kernel re-checks it) --------------------------

_FORMS: dict = {}


def derivative_free(t: T.Term, budget=None) -> T.Term:
    """The kernel's normal form of ``t`` read back as a term with statement-level index
    names (``prove_equal`` accepts it)."""
    hit = _FORMS.get(t)
    if hit is None:
        from verigrad.kernel.normal import Choices, Normalizer
        from verigrad.kernel.reify import reify
        from verigrad.kernel.sizes import fresh_index, reset_temporaries
        reset_temporaries()
        idx = [fresh_index(s, "k", "h") for s in t.shape]
        nz = Normalizer(choices=Choices(None, budget))
        body = reify(nz.norm(T.as_term(t), tuple(Poly.sym(v) for v in idx)))
        raw = T.Lamda(idx, body) if idx else body
        hit = _FORMS[t] = publish(raw)
        if len(_FORMS) > 256:
            _FORMS.pop(next(iter(_FORMS)))
    return hit


def publish(t: T.Term) -> T.Term:
    """``t`` with every kernel-reserved index (bound or free) renamed to a fresh
    statement-level one."""
    taken = set()
    seen = set()
    stack = [t]
    while stack:                 # every index name in the term, bound or free
        u = stack.pop()
        if id(u) in seen:
            continue
        seen.add(id(u))
        taken.update(v.name for v in u.free_idx)
        if isinstance(u, (T.Sum, T.ReduceMax)):
            taken.add(u.idx.name)
        elif isinstance(u, T.Lamda):
            taken.update(v.name for v in u.idxs)
        for a in u._args:
            for b in (a if isinstance(a, tuple) else (a,)):
                if isinstance(b, T.Term):
                    stack.append(b)
    memo: dict = {}

    def fresh(v):
        base = "b" if v.tag else v.name
        name = base
        k = 0
        while name in taken:
            k += 1
            name = f"{base}{k}"
        taken.add(name)
        return T.IndexVar(name, v.size)

    def go(u):
        if not u.reserved:
            return u
        if u in memo:
            return memo[u]
        if isinstance(u, (T.Sum, T.ReduceMax, T.Lamda)):
            olds = u.idxs if isinstance(u, T.Lamda) else (u.idx,)
            news = [fresh(v) if v.tag else v for v in olds]
            body = T.subst(u.body, {v: Poly.sym(w) for v, w in zip(olds, news) if v is not w})
            body = go(body)
            out = T.Lamda(news, body) if isinstance(u, T.Lamda) else type(u)(news[0], body, *u._args[2:])
        else:
            out = T.map_args(u, go)
        memo[u] = out
        return out

    out = go(t)
    free = [v for v in out.free_idx if v.tag]
    if free:
        out = T.subst(out, {v: Poly.sym(fresh(v)) for v in free})
    return out
