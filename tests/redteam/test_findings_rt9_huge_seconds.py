"""Red team RT9-B2 (helper rt9, open, minor: a traceback, not a verdict): a worker's
record is type-checked (``library._check_types``) but ``seconds`` may be any JSON number,
and the summary formats it with ``f"{r.seconds:.3f}"``. A file that rewrites its
worker's answer (``json.dumps``, as in RT8-C1) to ``"seconds": 10**400`` (an integer too
large for a float) makes ``verigrad verify evil.py`` end in ``OverflowError: int too large
to convert to float`` with a traceback (``command._summary``).

Command: ``verigrad verify evil.py --no-cache``.
"""

from _verify_files import run_cli

EVIL = '''
from verigrad.proof import *
import json as _json
_dumps = _json.dumps


def _big(obj, *args, **kwargs):
    if isinstance(obj, dict) and isinstance(obj.get("ok"), dict):
        obj["ok"]["record"]["seconds"] = 10 ** 400
    return _dumps(obj, *args, **kwargs)


_json.dumps = _big


@apply
def apply(x):
    return Equality(x + 1, x + 2)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)
'''


def test_rt9_b2_a_huge_seconds_field_prints_no_traceback(tmp_path):
    (tmp_path / "evil.py").write_text(EVIL)
    done = run_cli(["verify", "evil.py", "--no-cache"], tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr[-1500:]
