"""Where a network given by name is rendered when no ``--out`` is given, so that work
is not repeated (untrusted: a cache of files, never of verdicts).

``verigrad render NET`` and ``verigrad train NET`` both use
``.verigrad-cache/NAME-KEY/`` in the working directory, where ``KEY`` is a hash of
everything the rendered files depend on: the network (a name, or a network file's
path and sha256), the batch, the optimizer and its hyperparameters, the drop-path
rate, clipping, label smoothing, whether the pieces were certified and the text tied,
and the source of verigrad itself (a changed layer renders again). A directory there
with a ``manifest.json`` was completely rendered with that configuration: render writes
the manifest last.

Reusing it trusts nothing: ``verigrad train`` ties the exact bytes again before it
trains them (``verigrad.render.tie.ensure_tied``), as it does for any directory.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

ROOT = Path(".verigrad-cache")
_code: dict = {}


def code_fingerprint() -> str:
    """sha256 over verigrad's own source files (paths and bytes), computed once."""
    if "sha" not in _code:
        package = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for path in sorted(package.rglob("*.py")):
            h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
        _code["sha"] = h.hexdigest()
    return _code["sha"]


def _network(target: str) -> tuple[str, object]:
    """(a name for the folder, what identifies the network)."""
    from verigrad.nn.builder import is_spec, source_of
    if is_spec(target):
        source = source_of(target)
        return Path(source["file"]).stem + "-" + source["name"], source
    return target, target


def directory(target: str, *, batch: int, opt: str, drop_path: float, clip=None, label_smoothing: float = 0.1,
              hyper: dict | None = None, certify: bool = True, tie: bool = True, root: Path | None = None) -> Path:
    """The cache folder for rendering ``target`` with these options."""
    name, network = _network(target)
    config = {"network": network, "batch": int(batch), "opt": opt, "drop_path": float(drop_path),
              "clip": None if clip is None else float(clip), "label_smoothing": float(label_smoothing),
              "hyper": dict(sorted((hyper or {}).items())), "certify": bool(certify), "tie": bool(tie),
              "code": code_fingerprint()}
    key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:12]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return (root or ROOT) / f"{safe}-{key}"


def rendered(folder: Path) -> bool:
    """Whether ``folder`` holds a complete render (its manifest is written last)."""
    return (Path(folder) / "manifest.json").is_file()
