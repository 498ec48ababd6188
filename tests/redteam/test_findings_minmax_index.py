"""Red team RT-25 (fixed: an index with Min or Max in it is proved inside its axis, case by
case, or refused): such an index was read as a *total* read, 0 outside the tensor, so a
theorem file about an entry that does not exist was reported proved (``--no-cache``,
exit 0).

``Indexed`` is documented as strict indexing ("each index provably inside its axis: the
kernel checks it"; ``x[n]`` on an axis of size n is refused). An index with Min or Max in
it compiles to weighted cases (``indexing.index_term``), and every case was built as
``T.Index(base, ps, total=True)`` with no range check: ``x[Min(n, n)]`` (Min picks n) is
``[n <= n] * x_total[n] + ...``, which the kernel reads as 0 (axiom ``entry_off_shape``).

Reproduction::

    $ cat minidx.py
    from verigrad.proof import *

    @apply
    def apply(x, n):
        return Equality(x[Min(n, n)], 0)

    @prove
    def prove(Eq):
        n = Symbol.n(integer=True, positive=True)
        x = Symbol.x(shape=(n,), real=True)
        Eq << apply(x, n)

    $ verigrad verify --no-cache --steps minidx.py       # exit 0
    minidx  proved
             Eq[0]  proved   x[Min(n, n)] = 0
    axioms used: entry_off_shape, ring

No reading of the file makes it true: strictly ``x[n]`` has no entry (``x[n] = 0`` is
refused), NumPy raises, JAX clamps to ``x[n - 1]`` (1 at x = [1]). Likewise
``x[Max(-1, -2)] = 0`` (Python's ``x[-1]``, the last entry: 1 at x = [1]) and an
off-by-one clip ``x[Min(i + 1, n)]`` (read 0 at i = n - 1 instead of clamped).

Root cause: ``index_term`` gave the weighted cases total reads without asking whether
each case's index lies in range where its weight is 1. Fixed: the kernel must prove
``sum_c w_c prod_k [0 <= p_k][p_k <= s_k - 1] = 1`` (``indexing._in_range``) or the
read is refused, as a strict ``x[n]`` is; a clip that stays in range (Shaw et al.'s
``k + Min(Max(j - i, -k), k)`` on ``2k + 1`` rows, the library's relative_position) is
proved so and reads as before.
"""
import numpy as np
import pytest

from _verify_files import own_cache, verify

BODY = '''
from verigrad.proof import *


@apply
def apply(x, n):
    i = Symbol.i(integer=True)
    return Equality({lhs}, {rhs})


@prove
def prove(Eq):
    n = Symbol.n(integer=True, positive=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x, n)
'''

FALSE = {
    "min_at_n": ("x[Min(n, n)]", "0"),
    "max_negative": ("x[Max(-1, -2)]", "0"),
    "shift_past_end": ("Lamda[i:n](x[Min(i + 1, n)])[n - 1]", "0"),
}

TRUE = {
    "min_in_range": ("x[Min(n - 1, n)]", "x[n - 1]"),
    "max_in_range": ("x[Max(-1, 0)]", "x[0]"),
    "clamped_shift": ("Lamda[i:n](x[Min(i + 1, n - 1)])[n - 1]", "x[n - 1]"),
}


def test_rt25_the_statements_are_false():
    x = np.array([1.0])                      # n = 1
    assert x[min(len(x) - 1, len(x))] != 0   # JAX's clamped read of x[Min(n, n)]
    assert x[max(-1, -2)] != 0               # Python's x[-1]
    with pytest.raises(IndexError):
        x[min(len(x), len(x))]               # NumPy's strict read


@pytest.mark.parametrize("case", sorted(FALSE))
def test_rt25_an_index_out_of_range_by_cases_is_not_proved(case, tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    lhs, rhs = FALSE[case]
    path = tmp_path / f"minmax_{case}.py"
    path.write_text(BODY.format(lhs=lhs, rhs=rhs))
    assert verify(path).status != "proved", f"{lhs} = {rhs} reported proved"


@pytest.mark.parametrize("case", sorted(TRUE))
def test_rt25_an_index_in_range_by_cases_is_still_proved(case, tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    lhs, rhs = TRUE[case]
    path = tmp_path / f"minmax_ok_{case}.py"
    path.write_text(BODY.format(lhs=lhs, rhs=rhs))
    assert verify(path).status == "proved", f"{lhs} = {rhs} not proved"
