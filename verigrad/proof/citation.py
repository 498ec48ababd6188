"""Citations: using a proved theorem of the library inside another proof.

``module.apply(args)`` outside the module's own proof states the theorem for the
caller's arguments; the cited proof's kernel theorem is instantiated there
(``verigrad.kernel.instantiate`` checks every substitution) and fitted to the caller's
statement. ``Eq[-1].this.rhs.apply(module)`` rewrites a node with the cited equation,
finding the arguments by matching the node against the theorem's generic left side. A
cited theorem that is not proved leaves the citing facts pending and caps the citer.

The script runner layer, above ``script`` (a citation runs the cited proof) and below
``theorem``, whose ``apply`` calls it. ``stmt`` below is that ``apply``: its ``module``
and ``statements(*args)`` are all a citation reads of it.
"""
from __future__ import annotations

from verigrad.kernel import instantiate
from verigrad.kernel.sizes import Poly, SizeSym

from . import justification as K
from .context import current
from .errors import ProofError
from .expressions import Expr, IntSymbol, SizeExpr, TensorSymbol, as_expr, as_size
from .facts import Fact, settle
from .script import PROVED, run_proof
from .statements import Equality, Statement


def _unify(generic, caller, mapping, what):
    """Bind the cited theorem's symbols (sizes, tensor variables) to the caller's."""
    for g, c in zip(generic, caller):
        if isinstance(g, IntSymbol) and g.kind == "size":
            _bind_size(mapping, Poly.sym(g.sym), as_size(c), what)
    for g, c in zip(generic, caller):
        if isinstance(g, IntSymbol) and g.kind == "size":
            continue
        if isinstance(g, IntSymbol):
            p = as_expr(c).poly
            if p is not Poly.sym(g.sym):
                mapping[g.sym] = p       # the kernel checks p is inside the index's range
            continue
        if isinstance(g, TensorSymbol):
            c = as_expr(c)
            if g.definition is not None:
                raise ProofError(f"{what}: the argument {g.name} is a definition")
            if len(g.shape) != len(c.shape):
                raise ProofError(f"{what}: {c} has rank {len(c.shape)}, {g.name} rank {len(g.shape)}")
            for gs, cs in zip(g.shape, c.shape):
                _bind_size(mapping, gs, cs, what)
            if g.term is not c.term:
                mapping[g.term] = c.term
        elif isinstance(g, Statement):
            st = c.statement if isinstance(c, Fact) else c
            if not isinstance(st, Statement):
                raise ProofError(f"{what}: the hypothesis {g} needs a fact or a statement, not {c!r}")
            pattern = {id(n): n for side in g.sides for n in g.side(side).walk()
                       if isinstance(n, TensorSymbol) and n.definition is None}
            binds: dict = {}
            for side in g.sides:
                if side not in st.sides or not _match(g.side(side), st.side(side), pattern, binds):
                    raise ProofError(f"{what}: {st} does not match the hypothesis {g}")
            syms = [pattern[k] for k in binds]
            _unify(syms, [binds[id(x)] for x in syms], mapping, what)
        elif g is not c and g != c:
            raise ProofError(f"{what}: the argument {c!r} does not match {g!r}")
    return mapping


def _bind_size(mapping, g, c, what):
    syms = list(g.symbols())
    if len(syms) == 1 and isinstance(syms[0], SizeSym) and g is Poly.sym(syms[0]):
        s = syms[0]
        if g is c and s not in mapping:
            return
        if s in mapping and mapping[s] is not c:
            raise ProofError(f"{what}: size {s.name} would be both {mapping[s]} and {c}")
        mapping[s] = c
        return
    if g.subst(mapping) is not c:
        raise ProofError(f"{what}: size {g} does not match {c}")


def _instances(stmt, args, kw, what):
    """``(facts, result)``: the caller's statements, proved by instantiating the cited
    theorem (or left pending, with the reason, when it is not proved)."""
    res = run_proof(stmt.module)
    ctx = current()
    if ctx is not None and stmt.module not in ctx.cites:
        ctx.cites.append(stmt.module)
    givens = [a for a in args if isinstance(a, Fact)]
    sts = stmt.statements(*[a.statement if isinstance(a, Fact) else a for a in args], **kw)
    facts = [Fact(st, f"cite {stmt.module}", kind="cited") for st in sts]
    if res.status != PROVED:
        note = f"cites {stmt.module}, which is {res.status}" + (f" ({res.reason})" if res.reason else "")
        for f in facts:
            f.note = note
        if ctx is not None and note not in ctx.capped:
            ctx.capped.append(note)
        return facts, res
    if len(res.theorems) != len(sts):
        raise ProofError(f"{what}: the cited theorem proves {len(res.theorems)} statements, "
                         f"the call states {len(sts)}")
    mapping = _unify(res.generic_args or (), args, {}, what)
    for f, th in zip(facts, res.theorems):
        inst = instantiate(th, mapping) if mapping else th
        L, R = f.pair
        settle(f, K.fit(inst, L, R, what))
        if f.theorem is None:
            raise ProofError(f"{what}: the instance of the cited theorem is not {f}")
        if f.theorem.hyps:
            # The instance rests on the cited theorem's hypothesis, which the given fact
            # states; removing it needs a cut rule the kernel does not have yet.
            proved = [g.label for g in givens if g.theorem is not None and (g.theorem.lhs, g.theorem.rhs)
                      in f.theorem.hyps and not g.theorem.hyps]
            f.note = (f"rests on the hypothesis of {stmt.module}" + (f", which {', '.join(proved)} proves" if proved
                      else "") + "; discharging it needs a cut rule in the kernel (notes/kernel-requests/proof.md)")
            if ctx is not None:
                ctx.capped.append(f.note)
    return facts, res


def cite(stmt, args, kw):
    facts, _ = _instances(stmt, args, kw, f"citing {stmt.module}")
    return facts[0] if len(facts) == 1 else tuple(facts)


def _match(p: Expr, e: Expr, pattern: dict, binds: dict) -> bool:
    if id(p) in pattern:
        prev = binds.get(id(p))
        if prev is None:
            if isinstance(p, TensorSymbol) and len(p.shape) != len(e.shape):
                return False
            binds[id(p)] = e
            return True
        return prev == e
    if type(p) is not type(e) or len(p.args) != len(e.args):
        return False
    if not p.args:
        return p == e
    if getattr(p, "fn", None) is not getattr(e, "fn", None) or getattr(p, "exponent", None) != getattr(
            e, "exponent", None):
        return False
    return all(_match(a, b, pattern, binds) for a, b in zip(p.args, e.args))


def cite_at(stmt, node: Expr, args):
    """Rewrite ``node`` with a cited theorem ``lhs = rhs``: the arguments are given or found
    by matching ``node`` against the theorem's generic left side."""
    what = f"applying {stmt.module}"
    if not args:
        res = run_proof(stmt.module)
        if res.generic_args is None or not res.goal_statements:
            raise ProofError(f"{what}: the cited theorem did not state its goal ({res.status}: {res.reason})")
        generic = list(res.generic_args)
        pattern = {id(g): g for g in generic if isinstance(g, (TensorSymbol, IntSymbol))}
        binds: dict = {}
        goal = res.goal_statements[0]
        if not isinstance(goal, Equality) or not _match(goal.lhs, node, pattern, binds):
            raise ProofError(f"{what}: {node} does not match {goal.lhs}")
        size_binds = {}
        for g in generic:
            if isinstance(g, TensorSymbol) and id(g) in binds:
                for gs, cs in zip(g.shape, binds[id(g)].shape):
                    if len(gs.terms) == 1:
                        size_binds[gs.skey] = cs
        args = []
        for g in generic:
            if id(g) in binds:
                args.append(binds[id(g)])
            elif isinstance(g, IntSymbol) and g.kind == "size":
                p = Poly.sym(g.sym)
                if p.skey not in size_binds:
                    raise ProofError(f"{what}: cannot tell the size {g.name} from {node}")
                args.append(SizeExpr(size_binds[p.skey]))
            else:
                raise ProofError(f"{what}: cannot tell the argument {g} from {node}")
    facts, _ = _instances(stmt, tuple(args), {}, what)
    f = facts[0]
    if f.theorem is None:
        raise ProofError(f"{what}: {f.note}")
    if not isinstance(f.statement, Equality):
        raise ProofError(f"{what}: the cited statement is not an equation")
    if f.statement.lhs != node:
        th = K.decide(node.term, f.pair[0], what)
        return f.statement.rhs, K.chain(th, f.theorem)
    return f.statement.rhs, f.theorem
