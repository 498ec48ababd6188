"""The trusted kernel: terms, sizes, normal form, derivative, rules and ``Theorem``.

Everything verigrad reports as PROVED was made here, by the rules of ``theorem.py``;
the rest of verigrad is untrusted and can at worst fail to prove something. The
kernel imports nothing from the rest of verigrad and nothing of JAX. Each module's
docstring says what it holds. The printer is not part of the kernel (``verigrad.report.printing``, as in HOL Light).
"""
from .sizes import KernelError, SizeSym, IndexVar, Poly, as_poly, nonneg
from .terms import (Term, Var, Num, Const, IntVal, Index, Lamda, Add, Mul, Pow, Func, ScalarFn, Sum,
                    ReduceMax, Delta, IntCond, RealCond, TensorFn, Apply, Deriv, Named, Vjp, At, FnLam,
                    subst, as_term, vjp_statement)
from .normal import NotDifferentiable
from .permutation import Argsort, IntDiv, IntEq
from .axioms import AXIOMS, Axiom
from .theorem import (Theorem, Condition, Failure, refl, assume, symm, trans, index, abstract, define,
                      rewrite, discharge, at_elim, instantiate, prove_equal)

__all__ = [n for n in dir() if not n.startswith("_")]
