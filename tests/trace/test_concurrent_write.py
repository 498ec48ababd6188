"""Two writers of one trace path (two `verify --proofs` runs, say) each write a temporary
file of their own: the path ends up holding one whole trace, never a mix (they shared one
fixed `PATH.tmp` before; noticed by red team helper-18)."""
import json
import threading

from verigrad.kernel import Num, Var, refl
from verigrad.trace import write_trace
from verigrad.trace.replay import replay


def test_concurrent_writers_leave_one_whole_trace(tmp_path):
    path = tmp_path / "t.trace.json"
    big = Var("x")
    for _ in range(40):
        big = big + Num(1)
    claims = {"a": [("a", refl(Var("y")))], "b": [("b", refl(big))]}
    errors = []

    def write(name):
        try:
            for _ in range(20):
                write_trace(path, claims[name])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=write, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    names = [name for name, _ in replay(json.loads(path.read_text()))]
    assert names in (["a"], ["b"])
    assert [p.name for p in tmp_path.iterdir()] == ["t.trace.json"]      # no temporary file left
