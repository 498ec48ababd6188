"""Red team RT2-D4 (fixed: names that read alike are one name): RT-34's fix, "the proof
language refuses two different tensor symbols of one name in one statement", compared
names by code points, so a definition named with the Cyrillic ``х`` (U+0445) beside the
variable ``x`` was accepted, and ``verigrad verify`` reported proved (``--no-cache``,
exit 0) a file whose steps read ``x + х = x`` (false for a real vector x, at x = [1]), as
did the LaTeX of the HTML page (``[x_j + х_j]_{j<n} = x``)::

    @apply
    def apply(x):
        n = x.shape[0]
        z = Symbol.х(definition=ZeroMatrix(n))       # Cyrillic: a valid Python identifier
        return Equality(x + z, x)

Likewise a Hangul filler (``Symbol("x\\u3164", ...)``, a letter with no glyph) or a
zero-width joiner. ``statements.one_symbol_per_name`` now compares names by how they read
(``verigrad.report.printing.skeleton``), and the kernel's printer primes such a second
name (``test_findings_check_reading``).
"""
from _verify_files import own_cache, verify

BODY = '''
from verigrad.proof import *


@apply
def apply(x):
    n = x.shape[0]
    z = Symbol({name!r}, definition=ZeroMatrix(n))
    return Equality(x + z, x)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x)
    Eq << Eq[1].this.lhs.args[1].definition
'''


def test_a_look_alike_name_is_refused(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    for k, name in enumerate(("\u0445", "x\u3164", "x\u200d", "\uff58")):
        path = tmp_path / f"alike{k}.py"
        path.write_text(BODY.format(name=name))
        rec = verify(path)
        assert rec.status != "proved", (name, rec.status, [s.display for s in rec.steps])
        why = "read alike" if name.isidentifier() else "a name is an identifier"    # (a ZWJ: RT2-D6)
        assert rec.status == "failed" and why in rec.reason, (name, rec.status, rec.reason)


def test_a_name_of_its_own_is_still_proved(tmp_path, monkeypatch):
    """The neighbours: the definition named z, or a Greek name, ``x + z = x`` is proved."""
    own_cache(tmp_path, monkeypatch)
    for k, name in enumerate(("z", "\u03b6")):
        path = tmp_path / f"own{k}.py"
        path.write_text(BODY.format(name=name))
        rec = verify(path)
        assert rec.status == "proved", (name, rec.status, rec.reason)
