"""The axiom registry (trusted): every rule the kernel may rest on, named and justified.

A theorem lists the axioms it rests on (``Theorem.axioms()``). The normal form's rules
are axiom *schemas*: each is recorded by name whenever the normalizer uses it. Each
entry says what it states and why that is true of the real numbers (with the total
conventions ``0^-1 = 0``, ``log 0 = 0``, ``log x = log |x|``, ``x^r = 0`` for ``x < 0`` and
fractional ``r``, and ``x[e] = 0`` for an index off the shape).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Axiom:
    name: str
    statement: str
    why: str


AXIOMS: dict[str, Axiom] = {}


def _r(name: str, statement: str, why: str):
    assert name not in AXIOMS, name
    AXIOMS[name] = Axiom(name, statement, why)


# Ring and power laws -------------------------------------------------------------------
_r("ring", "a + b = b + a, a(b + c) = ab + ac, ... (commutative ring laws with rational constants)",
   "The reals form a field containing the rationals; the normal form is the polynomial ring.")
_r("pow_add_pos", "a > 0  ->  a^r a^s = a^(r+s)", "Exponent law for a positive base and rational exponents.")
_r("pow_add_int", "a^m a^n = a^(m+n) for integers m, n (a != 0 when m + n = 0)",
   "Exponent law for integer exponents; with 0^-1 = 0 it holds at a = 0 unless m + n = 0, "
   "which is then recorded as the condition a != 0.")
_r("pow_mul", "(c prod a_i^k_i)^n = c^n prod a_i^(k_i n) for an integer n",
   "Integer powers distribute over products and compose (k_i integer or a_i > 0).")
_r("pow_mul_pos", "c > 0, a_i > 0  ->  (c prod a_i^k_i)^r = c^r prod a_i^(k_i r)",
   "Rational powers distribute over products of positive factors.")
_r("pow_expand", "(a + b)^n = a^n + ... + b^n for an integer n >= 1",
   "The binomial/multinomial expansion is repeated distributivity.")
_r("pow_content", "(g u)^r = g^r u^r for a rational g > 0 (u > 0 if r is not an integer)",
   "Powers distribute over a product with a positive constant.")
_r("indicator_idempotent", "[P]^k = [P] for k != 0", "An indicator is 0 or 1, and 0^k = 0, 1^k = 1 (with 0^-1 = 0).")
_r("indicator_split", "f(u) = (1 - [P]) f(u[[P] := 0]) + [P] f(u[[P] := 1]) for an indicator or delta [P] and f one of "
   "exp, log, tanh, erf, sin, cos, an opaque function, a real indicator, a power u^r; e.g. exp(c m [P] + v) = exp(v) (1 - [P] + "
   "[P] exp(c m))", "Precondition, enforced by the normal form: [P] is an idempotent atom, which takes only the values "
   "0 and 1. Where [P] = 0 the right side is f(u[[P] := 0]) = f(u), where [P] = 1 it is f(u[[P] := 1]) = f(u).")
_r("indicator_nonneg", "u >= 0  ->  [u >= 0] = 1, [u < 0] = 0; and where u != 0 also [u > 0] = 1, [u <= 0] = 0",
   "Precondition, enforced by the normal form: every monomial of u is non-negative (variables with the fact "
   "'nonneg' or 'positive', even powers, indicators, exponentials) with a positive coefficient. The second "
   "pair holds off the kink u = 0, recorded as a side condition.")
_r("indicator_order", "[w > a][w > b] = [w > a] for a >= b (>= alike, upper bounds alike, at a = b the strict one "
   "kept); [w > a][w < b] = 0 for a >= b, [w >= a][w <= b] = 0 for a > b (and the mixed strict cases)",
   "Order of the reals: one bound on w implies a weaker one on the same side, and a lower bound above an upper "
   "bound leaves no w. Precondition, enforced by the normal form: both indicators are of the same real w, "
   "their arguments lam w + c with rational lam != 0 and c (the relation flipped for lam < 0).")
# Indices, deltas, sums ------------------------------------------------------------------
_r("entry_off_shape", "x[e] = 0  when e is provably off the axis",
   "The total reading of a tensor: an entry off its shape is 0 (every such read is guarded in a term).")
_r("delta_decide", "[p == 0] = 0 when p is provably nonzero (or has no integer root)",
   "Decided by the integer arithmetic oracle (sizes.nonneg), which is sound.")
_r("delta_radix", "|r| < m  ->  [m q + r == 0] = [q == 0][r == 0];  0 <= r < m  ->  [m q + r >= 0] = [q >= 0]",
   "m q + r = 0 makes r a multiple of m, the only one with |r| < m being 0; and with 0 <= r < m, "
   "m q + r >= 0 exactly when q >= 0 (q <= -1 gives m q + r <= -1).")
_r("delta_subst", "[v == s] f(v) = [v == s] f(s)",
   "Where the delta is 1, v equals s; where it is 0 both sides are 0.")
_r("delta_elim", "sum_{v<N} [c v == -b] f(v) = [0 <= s < N][c | b] f(s), s = -b/c",
   "Only the term with v = s survives, if that s is an integer in range.")
_r("sum_linear", "sum_v (a f(v) + b g(v)) = a sum_v f(v) + b sum_v g(v)", "Finite sums are linear.")
_r("sum_const", "sum_{v<N} c = N c  when c does not depend on v", "A finite sum of N equal terms.")
_r("sum_pull", "sum_v c f(v) = c sum_v f(v)  when c does not depend on v", "Distributivity of a finite sum.")
_r("sum_split", "sum_{u,v} f(u) g(v) = (sum_u f(u)) (sum_v g(v))",
   "Distributivity of finite sums over independent blocks.")
_r("sum_nest", "sum_{u,v} f(u) g(u, v) = sum_u f(u) sum_v g(u, v)",
   "A factor that does not depend on v comes out of the sum over v (distributivity).")
_r("fubini", "sum_u sum_v f(u, v) = sum_v sum_u f(u, v); bound indices may be renamed",
   "Finite sums commute; renaming a bound index does not change a sum (alpha-equivalence).")
_r("sum_reindex", "sum_{c < q m} f(c) = sum_{u < q} sum_{v < m} f(u m + v)",
   "c = u m + v is a bijection of [0, q) x [0, m) onto [0, q m).")
_r("sum_window", "sum_{b<N} [L <= b <= L+w-1] f(b) = sum_{t<w} [0 <= L+t < N] f(L+t)",
   "b = L + t maps the window (cut to [0, N)) one-to-one onto t in [0, w) with L + t in range.")
_r("case_split", "(forall v < N. A[v] = B[v])  <-  A[0] = B[0], ..., A[N-1] = B[N-1]  for a constant N",
   "An index with a constant range takes finitely many values; the equation is decided for each.")
_r("index_split", "(forall c < q m. A[c] = B[c])  <->  (forall u < q, v < m. A[u m + v] = B[u m + v])",
   "The same bijection, for a free index of an equation.")
_r("max_const", "max_{v<N} c = c  when c does not depend on v (N >= 1)",
   "The maximum of a non-empty constant family.")
# Elementary functions ---------------------------------------------------------------------
_r("exp_add", "exp(a + b) = exp(a) exp(b), exp(c a) = exp(a)^c", "Functional equation of exp.")
_r("exp_log", "v > 0  ->  exp(c log v) = v^c", "exp and log are inverse on the positive reals.")
_r("log_mul", "a, b > 0  ->  log(a b) = log a + log b, log(a^r) = r log a",
   "Functional equation of log on the positive reals.")
_r("log_exp", "log(exp m) = m", "log inverts exp on all reals.")
_r("odd_function", "tanh(-u) = -tanh(u), erf(-u) = -erf(u), sin(-u) = -sin(u)", "tanh, erf and sin are odd.")
_r("even_function", "cos(-u) = cos(u)", "cos is even.")
_r("cancel_positive", "p > 0  ->  (a = b  <->  a p = b p)",
   "Multiplying by a positive (hence nonzero) quantity is invertible.")
# Derivatives ----------------------------------------------------------------------------------
_r("deriv_entry", "d x[I] / d x[P] = prod_a [I_a == P_a]",
   "Entries of a tensor are independent coordinates (P is on the shape).")
_r("deriv_product", "d (a b) = b da + a db", "Leibniz's product rule.")
_r("deriv_power", "d a^r = r a^(r-1) da  (a != 0 or a > 0 as recorded)",
   "Power rule, valid where the power is differentiable.")
_r("deriv_exp", "d exp(u) = exp(u) du", "exp' = exp.")
_r("deriv_log", "d log(u) = u^-1 du  (u != 0)", "log' = 1/x, also for log|x| at x < 0.")
_r("deriv_tanh", "d tanh(u) = (1 - tanh(u)^2) du", "tanh' = 1 - tanh^2.")
_r("deriv_trig", "d sin(u) = cos(u) du, d cos(u) = -sin(u) du", "sin' = cos and cos' = -sin.")
_r("deriv_erf", "d erf(u) = 2 pi^(-1/2) exp(-u^2) du", "Definition of erf as an integral.")
_r("deriv_max", "d max_b u(b) = sum_b [u(b) - max_c u(c) >= 0] du(b) where one b alone attains the max "
   "(min alike)", "Precondition, recorded as the condition 3/2 - #{b : u(b) = max} > 0: with u continuous (its own "
   "conditions are recorded) the other values stay below the maximum nearby, so max = u(b) there.")
_r("deriv_argmax", "d [u(p) - max_b u(b) >= 0] = 0 for p in the range of b, where one b alone attains the max "
   "(min alike) and u is differentiable", "Precondition, recorded as deriv_max's condition (and u's own conditions, "
   "from differentiating it; p in range is checked, since off the shape u(p) reads 0): the argmax b* then "
   "exceeds every other u(c) by a positive margin, which persists nearby by continuity, so the argmax and each "
   "such indicator are locally constant.")
_r("argmax_unique", "where one b alone attains M = max_b u(b), with T_p = [u(p) - M >= 0]: T_p T_q = T_p [p == q] for p, q "
   "in range; and f(S) = sum_t T_t f(sum_{..} g(t, ..)) for S = sum_{b, ..} T_b g(b, ..), b over M's non-empty range "
   "(min alike)", "Precondition, recorded as deriv_max's condition 3/2 - #{b : u(b) = M} > 0: the count is then at "
   "most 1, and at least 1 on a non-empty range (a maximum is attained), so exactly one T_t is 1, at t = b*, "
   "where S = sum_{..} g(b*, ..); and T_p = T_q = 1 forces p = q. Points in range are checked (off the shape u(p) "
   "reads 0, which may equal M without being counted).")
_r("deriv_sum", "d sum_v f(v) = sum_v d f(v)", "Linearity of the derivative; ranges are constant.")
_r("deriv_opaque", "d f(u) = sum_k f_k(u) du_k, chain rule through Jacobians",
   "Opaque functions are assumed differentiable; their partials are new symbols.")
_r("indicator_off_kink", "[t >= 0] = [t > 0] and [t < 0] = [t <= 0] = 1 - [t > 0]  where t != 0",
   "The indicators differ only at t = 0, which the recorded side condition excludes.")
_r("deriv_indicator_off_kink", "d [t > 0] = 0  where t != 0 and t is differentiable",
   "Near a point where t is continuous and nonzero, t keeps its sign, so the indicator is locally "
   "constant. Precondition, enforced by the derivative: t != 0 is recorded as a side condition (at the "
   "kink the convention, e.g. relu'(0) = 0, is excluded), and t is differentiated too, recording the "
   "conditions under which it is differentiable (hence continuous).")
_r("indicator_integer", "for an integer-valued u: [u > 0] = [u - 1 >= 0], [u <= 0] = [-u >= 0], "
   "[u < 0] = [-u - 1 >= 0], [g v + c >= 0] = [v + floor(c/g) >= 0], [u >= 0] = 1 - [-u - 1 >= 0]; a "
   "comparison of a polynomial u of sizes and indices is the integer indicator [p >= 0] of that polynomial",
   "Between two integers there is no other integer. Precondition, enforced by the normal form: every "
   "atom of u is integer-valued (entries of variables with the fact 'integer', integer expressions, "
   "indicators, sums of such) with a whole positive power, and its coefficients are integers.")
# Rules of the logic -----------------------------------------------------------------------------
_r("definition", "name = body for a defined constant", "Definitions are abbreviations (conservative).")
_r("conversion", "a = b  when a and b are one term once definitions are read as their bodies, Lamda[i](body)[e] "
   "as body[i := e] and bound indices renamed", "Each is the meaning of the term read: a definition abbreviates its "
   "body, a Lamda is the tensor of its entries (e is proved inside the axis), a bound index is a name.")
_r("extensionality", "(forall I. A[I] = B[I])  <->  A = B", "Tensors are functions of their indices.")
_r("congruence", "a = b  ->  C[a] = C[b]", "Leibniz's law (equals may be substituted).")
_r("at_elim", "At(b, p, v) = b[p := v]  when b takes no derivative in p, or v is a variable absent from b",
   "Evaluating at a point after differentiating is substitution when nothing is differentiated in p; "
   "for a fresh variable v, d/dp at p = v is d/dv.")

