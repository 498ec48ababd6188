"""Helpers for the certify tests: the example files and their documented command lines."""
import importlib.util
import re
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "certify"
COMMAND = re.compile(r"verigrad certify (\S+)((?: --shape \S*)+)")
FULL = re.compile(r"verigrad certify (\S+ .*)$", re.M)


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


def command_options(path: Path) -> dict:
    """The options of the example's documented command line other than --shape, as
    keywords of ``verigrad.certify`` (``assume``, ``stop_gradient``, ``output``, ...)."""
    import shlex
    from verigrad.certify.command import _group_parser, split_targets
    m = FULL.search(path.read_text())
    tokens = shlex.split(m.group(1))
    (_, opts), = split_targets(tokens)
    ns = vars(_group_parser().parse_args(opts))
    out = {}
    if ns.get("assume"):
        out["assume"] = ns["assume"]
    if ns.get("stop_gradient"):
        out["stop_gradient"] = ns["stop_gradient"]
    if ns.get("output"):
        out["output"] = ns["output"]
    if ns.get("wrt"):
        out["wrt"] = ns["wrt"]
    if ns.get("min"):
        out["minimum"] = {k: int(v) for k, v in (x.split("=") for x in ns["min"])}
    return out
