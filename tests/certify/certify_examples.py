"""Helpers for the certify tests: the example files and their documented command lines."""
import importlib.util
import re
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "certify"
COMMAND = re.compile(r"verigrad certify (\S+)((?: --shape \S*)+)")


def command_line(path: Path):
    """(function name, {argument: spec}) from the example's documented command line."""
    m = COMMAND.search(path.read_text())
    assert m, f"{path.name} must document its command line"
    shapes = dict(s.split("=", 1) for s in m.group(2).split(" --shape ")[1:])
    return m.group(1).split(":")[1], {k.strip(): v.strip() for k, v in shapes.items()}


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"certify_example_{path.stem}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)
