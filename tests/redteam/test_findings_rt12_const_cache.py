"""Red team RT12-E (helper rt12; fixed 2026-12-03): ``Poly.const(c)`` looks ``c`` up in its table and,
on a miss, stores ``Poly({(): c}) if c else ZERO`` under ``c`` itself. A falsy object
that hashes as 13 and equals anything never reaches the coefficient check: it is stored
as ``ZERO``, and from then on ``Poly.const(13)`` (``as_poly(13)``) is 0 in the whole
process.

The decision's case analysis sets a free index of small range to each value with
``Poly.const(v)``; the case 13 is then checked at 0:

    Poly.const(Falsy13())
    i = IndexVar("i", 14)
    prove_equal(Lamda[i](delta(i, 13)), Lamda[i](0))     # |- ... (axioms case_split, ring)

false at i = 13. (The statement's 13 is spelled ``Poly({(): 13})`` so that it is not read
through the poisoned table; ``verigrad check`` refuses the trace.) The test runs in a
subprocess, as the poison is process-wide.

Expected fix: ``Poly.const`` (and ``Poly.sym``) check the argument's exact type (``type(c)
is int``; an ``IntSym``) before the table is consulted or filled.
"""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r'''
from verigrad.kernel import Delta, IndexVar, KernelError, Lamda, Num, Poly, Theorem, prove_equal
class Falsy13:
    def __hash__(self): return hash(13)
    def __bool__(self): return False
    def __eq__(self, other): return True
try:
    Poly.const(Falsy13())
except KernelError:
    pass
assert Poly.const(13).const_value() == 13, "Poly.const(13) is " + repr(Poly.const(13))
i = IndexVar("i_rt12e", 14)
r = prove_equal(Lamda((i,), Delta(i, Poly({(): 13}))), Lamda((i,), Num(0)))
assert not isinstance(r, Theorem), "false theorem: Lamda[i](delta(i, 13)) = 0"
print("OK")
'''


def test_a_falsy_constant_does_not_poison_the_constant_table():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VERIGRAD_WITNESS": "0"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0 and "OK" in done.stdout, done.stderr[-2000:]
