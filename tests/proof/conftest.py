"""Helpers: theorem files written to a temporary package and run like library ones."""
import importlib
import sys
import textwrap
import uuid

import pytest

from verigrad.proof import script


@pytest.fixture
def theorem(tmp_path, monkeypatch):
    """``theorem(source) -> ProofResult``: write a theorem module and run its proof."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def run(source: str):
        name = f"vg_theorem_{uuid.uuid4().hex[:10]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        try:
            return script.run_proof(name)
        finally:
            sys.modules.pop(name, None)
    return run
