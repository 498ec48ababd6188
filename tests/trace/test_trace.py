"""The trace writer (``verigrad.trace``): what it costs to write a trace."""
def test_a_hypothesis_with_shared_parts_is_written_without_spelling_it():
    """A term that uses each part twice, 40 deep, has a key (``skey``) of about 2^40
    characters; the writer orders hypotheses by a digest of their structure instead
    (a network's hypotheses made ``verigrad certificates --proofs`` hold 24 GB)."""
    import subprocess
    import sys
    code = ("from verigrad.kernel import Var, Func, Add, assume\n"
            "from verigrad.trace import trace_of\n"
            "t = Var('x', ())\n"
            "for _ in range(40):\n"
            "    t = Func('exp', (Add((t, Func('tanh', (t,)))),))\n"
            "print(len(trace_of([('h', assume(Var('h', ()), t))])['objects']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-1000:]
    assert int(out.stdout) == 3 * 40 + 2      # x, then exp, add, tanh per level, and h
