"""Side conditions about maxima, judged by ``conditions.failing`` on their own: the
symbols, the importer's row maximum of a -inf mask, and a stand-in theorem with one
condition."""
from dataclasses import dataclass

from verigrad.certify.conditions import failing
from verigrad.kernel import IndexVar, Num, RealCond, ReduceMax, SizeSym, Var

n, d = SizeSym("n"), SizeSym("d")
s, mask = Var("s", (n, d)), Var("mask", (n, d))
i, b, q = IndexVar("i", n), IndexVar("b", d), IndexVar("q", d)

PLANS = [{n: 1, d: 1}, {n: 2, d: 3}, {n: 3, d: 4}]


@dataclass(frozen=True)
class _Cond:
    kind: str
    term: object

    def __str__(self):
        return f"{self.term} {'>' if self.kind == 'positive' else '!='} 0"


@dataclass
class _Theorem:
    conds: list


def verdict(kind, term, sample, plans=PLANS, alive=None):
    """``failing`` of a theorem whose one condition is ``term`` of ``kind`` (``positive``:
    ``term > 0``; ``offkink``: ``term != 0``), drawn by ``sample``."""
    return failing(_Theorem([_Cond(kind, term)]), sample, plans, alive=alive)


def masked_max(row):
    """The importer's row maximum of a -inf mask: max_b([mask] s_b + (1 - [mask]) (min s - 1))."""
    m = RealCond(mask[row, b], ">")
    low = ReduceMax(q, s[row, q], "min") - Num(1)
    return ReduceMax(b, m * s[row, b] + (Num(1) - m) * low)
