"""The theorem library: discovery, records, a content-addressed cache, parallel checking.

The API the ``verify`` command and the HTML proof browser are built on:

- ``load_library()`` -> ``[TheoremInfo]``: every theorem file under
  ``verigrad/library/<area>/<name>.py`` (name ``area.name``), with what it cites;
- ``verify_theorem(name_or_path)`` -> ``TheoremRecord``: runs one proof in this process;
  the record keeps the live kernel objects (``record.theorems``, each step's
  ``lhs``/``rhs`` terms and ``theorem``) besides its JSON-able fields;
- ``verify_library(patterns, jobs, use_cache)`` -> ``[TheoremRecord]``: many theorems,
  in worker processes (``workers``), results cached by a content hash of the theorem
  file, of every file it cites (transitively), of every module it imports from outside
  verigrad, and of verigrad's own sources (the kernel's among them) and version. The
  process that calls it never runs a theorem file (a file can rebind the kernel of the
  process it runs in, red team RT8-C1), and believes no worker's "proved": each comes
  with its proof's trace, which this process's kernel replays; the record's statement,
  axioms and conditions are the replayed theorems'. A cached "proved" is never believed
  either: a worker replays the entry's trace and checks that it proves exactly what the
  theorem file states (the file's ``apply``, run up to the statement), then this process
  replays it again. A stale or planted entry can cost time, never a verdict.

A record: ``name, area, file, doc, status ('proved' | 'plausible' | 'failed'), reason,
line, statement (the kernel's, as text), latex, display (as written), steps, axioms,
conditions, cites, seconds``. A step: ``label, index, name, line, rule, uses (labels of
the entries it used), status ('proved' | 'pending'), kind ('goal', 'definition', ...),
display, statement, latex`` and, live only, ``lhs``, ``rhs`` and ``theorem``.

The layer above the script runner (it runs proofs with ``script.run_proof``) and below
the command.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
from dataclasses import dataclass, field, fields
from fnmatch import fnmatch
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Optional

from .complex_symbols import has_complex, ring_only
from .script import FILES, forget, run_proof, statement_of

PACKAGE = "verigrad.library"
ROOT = Path(__file__).resolve().parent.parent / "library"
SOURCES = Path(__file__).resolve().parent.parent


@dataclass
class TheoremInfo:
    name: str          # "softmax.sums_to_one"
    module: str        # "verigrad.library.softmax.sums_to_one"
    area: str
    file: str
    cites: list = field(default_factory=list)   # modules imported from the library

    @property
    def doc(self) -> str:
        tree = _parsed(Path(self.file))
        if tree is None:
            return ""
        return (ast.get_docstring(tree) or "").strip()


def _parsed(path: Path):
    """The syntax tree of a source file, read as Python reads it (bytes: its coding cookie
    honoured), or None if it cannot be read or parsed (red team RT9-B1: a latin-1 file, an
    expression nested past the parser's depth). Its worker then says why, as it runs it."""
    try:
        return ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_LIVE = ("lhs", "rhs", "theorem", "theorems")     # kernel objects: not JSON, not cached


@dataclass
class StepRecord:
    label: str
    index: Optional[int]
    name: Optional[str]
    line: Optional[int]
    rule: str
    uses: list
    status: str
    kind: str
    display: str
    statement: str
    latex: str
    note: str = ""
    lhs: Any = field(default=None, repr=False, compare=False)
    rhs: Any = field(default=None, repr=False, compare=False)
    theorem: Any = field(default=None, repr=False, compare=False)

    def to_json(self, printed: bool = True) -> dict:
        """The step as JSON; with ``printed=False`` a statement not yet printed from its
        theorem stays "" (a cache entry's proved steps are printed again from its replay)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _LIVE + ("statement", "latex")}
        for name in ("statement", "latex"):
            d[name] = getattr(self, name) if printed else (self.__dict__.get(name) or "")
        return {f.name: d[f.name] for f in fields(self) if f.name not in _LIVE}

    # Notebook display (verigrad.report.notebook): the step as math.
    def _repr_latex_(self):
        return "$" + self.latex + "$" if self.latex else None

    def _repr_html_(self):
        from verigrad.report.notebook import step_html
        return step_html(self)


@dataclass
class TheoremRecord:
    name: str
    area: str
    file: str
    status: str
    reason: str = ""
    line: Optional[int] = None
    doc: str = ""
    statement: str = ""
    latex: str = ""
    display: str = ""
    steps: list = field(default_factory=list)
    axioms: list = field(default_factory=list)
    conditions: list = field(default_factory=list)
    cites: list = field(default_factory=list)
    seconds: float = 0.0
    cached: bool = False
    theorems: list = field(default_factory=list, repr=False, compare=False)
    trace: Optional[dict] = field(default=None, repr=False, compare=False)   # the proof, replayable

    def to_json(self, printed: bool = True) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _LIVE + ("steps", "cached", "trace")}
        d["steps"] = [s.to_json(printed) for s in self.steps]
        return d

    # Notebook display (verigrad.report.notebook): the statement as math, with its status.
    def _repr_latex_(self):
        from verigrad.report.notebook import record_latex
        return record_latex(self)

    def _repr_html_(self):
        from verigrad.report.notebook import record_html
        return record_html(self)

    @staticmethod
    def from_json(d: dict) -> "TheoremRecord":
        """A record from its JSON (a cache entry, a worker's answer): never with live
        kernel objects, whatever the JSON says (they come only from a replay)."""
        d = {k: v for k, v in d.items() if k not in _LIVE + ("trace", "cached")}
        steps = [StepRecord(**{k: v for k, v in s.items() if k not in _LIVE}) for s in d.pop("steps", [])]
        return TheoremRecord(steps=steps, **d)


# -- discovery ----------------------------------------------------------------------------------

def _step_text(th, latex: bool) -> str:
    """A replayed step as text (or LaTeX): its equation, with its hypotheses and side
    conditions if it has any (red team RT9-A1: an ``assume`` of the goal read as the goal)."""
    if th.hyps or th.conds:     # (RT10-B1: ``x*y/y = x`` read without its ``y != 0``)
        return th.latex() if latex else th.statement()
    return _latex_pair(th.lhs, th.rhs) if latex else _text_pair(th.lhs, th.rhs)


def _printed_when_read(name: str, latex: bool):
    """A step's ``statement`` or ``latex``: None set means "print it from the step's
    theorem when first read", so a run that shows no steps does not print them (the
    printer is most of what confirming a record costs)."""
    def get(self):
        text = self.__dict__.get(name)
        if text is None:
            text = self.__dict__[name] = _step_text(self.theorem, latex) if self.theorem is not None else ""
        return text

    def put(self, text):
        self.__dict__[name] = text
    return property(get, put)


StepRecord.statement = _printed_when_read("statement", latex=False)
StepRecord.latex = _printed_when_read("latex", latex=True)


def _module_of(path: Path) -> str:
    rel = path.resolve().relative_to(ROOT).with_suffix("")
    return PACKAGE + "." + ".".join(rel.parts)


def cites_of(path: Path) -> list:
    """The library modules a theorem file imports (its citations), read without running it."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    if PACKAGE.encode() not in data and b"from ." not in data:
        return []                         # most theorem files cite nothing: skip parsing
    tree = _parsed(path)
    if tree is None:
        return []
    me = _module_of(path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = me.split(".")[:-node.level]
                base = ".".join(parts + ([base] if base else []))
            if not base.startswith(PACKAGE):
                continue
            for a in node.names:
                for cand in (f"{base}.{a.name}", base):
                    if _file_of(cand) is not None:
                        out.append(cand)
                        break
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(PACKAGE) and _file_of(a.name) is not None:
                    out.append(a.name)
    return sorted(set(m for m in out if m != me))


def _file_of(module: str) -> Optional[Path]:
    if not module.startswith(PACKAGE + "."):
        return None
    rel = module[len(PACKAGE) + 1:].split(".")
    p = ROOT.joinpath(*rel).with_suffix(".py")
    return p if p.is_file() else None


def load_library(root: Path | None = None) -> list:
    """Every theorem file of the library, sorted by name."""
    root = Path(root) if root else ROOT
    out = []
    for path in sorted(root.glob("*/*.py")):
        if path.name.startswith("_"):
            continue
        module = _module_of(path)
        name = module[len(PACKAGE) + 1:]
        out.append(TheoremInfo(name, module, path.parent.name, str(path), cites_of(path)))
    return out


def select(infos, patterns) -> list:
    """Theorems selected by whole names, not substrings: a pattern is a theorem
    (``softmax.rows``), an area (``softmax``), a name within an area (``softmax_vjp``
    selects ``vjp.softmax_vjp``), a glob over names or areas (``'vjp.*softmax*'``) or a
    file; all when no pattern is given."""
    if not patterns:
        return list(infos)
    out = []
    for info in infos:
        for p in patterns:
            if fnmatch(info.name, p) or fnmatch(info.area, p) or p in info.name.split(".") or \
                    Path(p).resolve() == Path(info.file).resolve():
                out.append(info)
                break
    return out


# -- records from proof runs ----------------------------------------------------------------------

def _text_pair(L, R):
    from verigrad.report.printing import equation       # both sides in one display
    return equation(L, R)


def _latex_pair(L, R):
    from verigrad.report.printing import equation_latex
    return equation_latex(L, R)


def record_of(res, info: TheoremInfo | None = None) -> TheoremRecord:
    """A record of a proof run (``script.ProofResult``)."""
    log = res.log
    steps = []
    if log is not None:
        for f in log.entries:
            try:
                L, R = f.pair
                statement, latex = _text_pair(L, R), _latex_pair(L, R)
            except Exception as e:          # a statement that does not compile
                L = R = None
                statement, latex = f"(does not compile: {e})", ""
            uses = [g.label for g in f.inputs if g.index is not None or g.name is not None]
            steps.append(StepRecord(f.label, f.index, f.name, f.line, f.rule, uses,
                                    "proved" if f.proved else "pending", f.kind, str(f), statement, latex,
                                    f.note or "", L, R, f.theorem))
    if res.theorems:
        statement = "; ".join(th.statement() for th in res.theorems)
        latex = "; ".join(th.latex() for th in res.theorems)
    else:
        goals = [f for f in (log.goals if log is not None else [])]
        statement = "; ".join(_safe(lambda: _text_pair(*g.pair)) for g in goals)
        latex = "; ".join(_safe(lambda: _latex_pair(*g.pair)) for g in goals)
    display = "; ".join(str(s) for s in (res.goal_statements or []))
    name = info.name if info else res.module.split(".", 2)[-1]
    area = info.area if info else name.split(".")[0]
    return TheoremRecord(name=name, area=area, file=res.file or (info.file if info else ""), status=res.status,
                         reason=res.reason, line=res.line, doc=info.doc if info else "", statement=statement,
                         latex=latex, display=display, steps=steps, axioms=res.axioms if res.status == "proved" else [],
                         conditions=res.conditions, cites=list(res.cites), seconds=round(res.seconds, 6),
                         theorems=list(res.theorems))


def _safe(fn):
    try:
        return fn()
    except Exception as e:
        return f"(does not compile: {e})"


def file_info(path) -> TheoremInfo:
    """A theorem file outside the library (``verigrad verify my_theorem.py``)."""
    path = Path(path).resolve()
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    module = f"_verigrad_file_{path.stem}_{digest}"
    FILES[module] = str(path)
    tree = _parsed(path)
    cites = [] if tree is None else sorted({
        c for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
        and node.module.startswith(PACKAGE) for c in _resolve(node.module, node.names)})
    return TheoremInfo(path.stem, module, "file", str(path), cites)


def _resolve(base, names):
    for a in names:
        for cand in (f"{base}.{a.name}", base):
            if _file_of(cand) is not None:
                yield cand
                break


def _info_for(name_or_path) -> TheoremInfo:
    infos = load_library()
    for info in infos:
        if name_or_path in (info.name, info.module) or (
                os.path.exists(str(name_or_path)) and Path(name_or_path).resolve() == Path(info.file).resolve()):
            return info
    if str(name_or_path).endswith(".py") and os.path.isfile(str(name_or_path)):
        return file_info(name_or_path)
    raise KeyError(f"no theorem {name_or_path!r} in the library")


def verify_theorem(name_or_path) -> TheoremRecord:
    """Check one theorem (a library name, or the path of a theorem file anywhere) in this
    process and return its record (with live kernel objects)."""
    info = _info_for(name_or_path)
    return record_of(run_proof(info.module), info)


def _traced(rec: TheoremRecord) -> TheoremRecord:
    """``rec`` with the trace of its proof: its goals' theorems as the claims (proved
    theorems only) and, under ``"proof_steps"``, the theorem of every proved step by its
    label, which a cache hit replays to show the steps (``_load_cached``)."""
    steps = [(s.label, s.theorem) for s in rec.steps if s.status == "proved" and s.theorem is not None]
    goals = rec.theorems if rec.status == "proved" else []
    if (goals or steps) and rec.trace is None:
        from verigrad.trace import trace_of
        try:
            full = trace_of([(f"{rec.name}" + (f" ({k + 1})" if len(goals) > 1 else ""), th)
                             for k, th in enumerate(goals)] + steps)
        except ValueError as e:         # a proof the trace format cannot hold: not cached
            if rec.status == "proved":
                rec.reason = f"no proof trace: {e}"
            return rec
        rec.trace = dict(full, claims=full["claims"][:len(goals)], proof_steps=full["claims"][len(goals):])
    return rec


# -- the cache ----------------------------------------------------------------------------------------

def cache_dir() -> Path:
    return Path(os.environ.get("VERIGRAD_CACHE") or Path.home() / ".cache" / "verigrad") / "verify"


@lru_cache(maxsize=1)
def _fingerprint() -> str:
    """verigrad's version and sources (all but the library): a change anywhere in the
    checker invalidates every cached result."""
    from verigrad import __version__
    h = hashlib.sha256(__version__.encode())
    for p in sorted(SOURCES.rglob("*.py")):
        if ROOT in p.parents:
            continue
        h.update(str(p.relative_to(SOURCES)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _outside_imports(path: Path, seen: set) -> list:
    """The source files of the modules ``path`` imports from outside verigrad and outside
    the Python installation (a helper next to the theorem, a package of the user's),
    transitively."""
    import sys
    tree = _parsed(path)
    if tree is None:
        return []
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    installed = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    out = []
    for name in sorted(names):
        if name.split(".")[0] == "verigrad":
            continue
        spec = _find_quietly(name)
        origin = Path(spec.origin).resolve() if spec is not None and spec.origin and spec.has_location else None
        if origin is None or origin in seen or any(p in origin.parents for p in installed):
            continue
        seen.add(origin)
        out += [origin] + _outside_imports(origin, seen)
    return out


def _find_quietly(name: str):
    """The spec of module ``name``, found without importing anything: not even a dotted
    name's parent packages, which ``importlib.util.find_spec`` imports (their
    ``__init__`` is a user's code, and this process never runs a user's code: see
    ``verify_library``). None if not found on ``sys.path``."""
    import sys
    from importlib.machinery import PathFinder
    spec, path, parts = None, None, name.split(".")
    for k in range(len(parts)):
        loaded = sys.modules.get(".".join(parts[:k + 1]))
        try:
            spec = getattr(loaded, "__spec__", None) or PathFinder.find_spec(".".join(parts[:k + 1]), path)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        path = spec.submodule_search_locations
        if path is None and k < len(parts) - 1:
            return None
    return spec


def cache_key(info: TheoremInfo, by_module: dict) -> str:
    """Content hash of the theorem file, of every file it cites, transitively, and of
    every module from outside verigrad they import."""
    seen, stack = set(), [info.module]
    while stack:
        m = stack.pop()
        if m in seen:
            continue
        seen.add(m)
        other = by_module.get(m)
        if other is not None:
            stack.extend(other.cites)
    h = hashlib.sha256(_fingerprint().encode())
    h.update(info.module.encode())
    h.update(Path(info.file).read_bytes() if info.area == "file" else b"")
    files, outside = [], set()
    for m in sorted(seen):
        f = _file_of(m)
        h.update(m.encode())
        h.update(f.read_bytes() if f is not None else b"<missing>")
        files.append(f)
    for f in [Path(info.file)] + [f for f in files if f is not None]:
        for g in _outside_imports(f, outside):
            h.update(str(g).encode())
            h.update(g.read_bytes())
    return h.hexdigest()


def _load_cached(key: str, info: TheoremInfo) -> Optional[TheoremRecord]:
    """The cached record, if it still holds (in a worker, which can run the theorem file):
    a "proved" one only when its trace records exactly the statements the theorem file
    makes now (``_replayed``); a step kept proved only when the trace records it. The
    reporting process then replays the trace (``_confirmed``): only that makes anything
    proved, and the record's statement, axioms and conditions are that replay's."""
    p = cache_dir() / f"{key}.json"
    try:
        rec = TheoremRecord.from_json(json.loads(p.read_text()))
        trace_file = cache_dir() / f"{key}.trace.json"
        trace = json.loads(trace_file.read_text()) if rec.status == "proved" or trace_file.is_file() else None
    except (OSError, ValueError, TypeError):
        return None
    # Which theorem the record is of comes from the library, never from the entry (red team
    # RT2-D1: a planted entry named another theorem, and the table read "bad proved" beside
    # "good unproved"; ``verify --proofs`` wrote to a path the name chose). The key hashes
    # contents, not places: an entry made in another checkout names that checkout's file.
    rec.name, rec.area, rec.file, rec.doc = info.name, info.area, info.file, info.doc
    if rec.status != "proved":
        return None         # only a proof is worth keeping: an entry saying "unproved" decides nothing (RT10-A1)
    replayed = _replayed(trace, info, rec.status == "proved") if trace is not None else None
    if rec.status == "proved" and replayed is None:
        return None
    if replayed is not None:
        rec.display = replayed[2]       # the goals as the file writes them now, not as the entry says
        rec.trace = trace               # replayed by the reporting process (``_confirmed``), which fills the rest
    _replayed_steps(rec, replayed[1] if replayed is not None else {})
    rec.cached = True
    return rec


def _replayed_steps(rec: TheoremRecord, by_label: dict):
    """The steps of a record as the replay shows them (red team RT3-B1: a planted entry's
    steps read ``Eq[2]  proved   1 + 1 = 3`` in ``verify --steps`` and on the HTML pages,
    beside a goal the kernel replayed; RT9-A1: so did a hostile worker's): a step is
    proved only if the trace replays its theorem (``by_label``), and its statement and
    LaTeX are that theorem's. How the proof wrote it (``display``) cannot be replayed: it
    is dropped."""
    for s in rec.steps:
        th = by_label.get(s.label) if s.status == "proved" else None
        if th is None:
            s.status = "pending"
        else:
            s.theorem, s.statement, s.latex = th, None, None       # printed from ``th`` when read
        s.display = ""


def _replay(trace: dict):
    """``(claim theorems, {step label: theorem})``, the kernel's replay of a verify trace
    (its claims, then its ``proof_steps``); ``TraceError`` if it does not replay."""
    from verigrad.trace.replay import TraceError, replay
    claims = trace.get("claims", []) if isinstance(trace, dict) else None
    steps = trace.get("proof_steps", []) if isinstance(trace, dict) else None
    if not (isinstance(claims, list) and isinstance(steps, list)):
        raise TraceError("not a trace of verify")
    replayed = replay(dict(trace, claims=claims + steps))
    return [th for _, th in replayed[:len(claims)]], dict(replayed[len(claims):])


def _recorded(trace: dict):
    """``(claims, {step label: claim})``: what a verify trace says its claims and proof
    steps state (each with ``lhs``, ``rhs``, ``hyps``), decoded but not replayed. Enough
    to see whether a cache entry is about what a theorem file states now; never a proof
    (the reporting process replays the trace: ``_confirmed``)."""
    from types import SimpleNamespace
    from verigrad.trace.replay import build, decode
    objs = []
    for entry in trace["objects"]:
        objs.append(build(entry, objs))

    def stated(claim):
        st = trace["steps"][claim["step"]]
        return SimpleNamespace(lhs=decode(st["lhs"], objs), rhs=decode(st["rhs"], objs),
                               hyps=frozenset(decode(h, objs) for h in st.get("hyps", [])))
    return [stated(c) for c in trace["claims"]], {c["name"]: stated(c) for c in trace["proof_steps"]}


def _says_complex(info: TheoremInfo) -> bool:
    """Whether the source of theorem ``info``, of a file it cites (transitively) or of a
    module it imports from outside verigrad contains the word ``complex`` (a cheap,
    conservative stand-in for the proof log's complex symbols, which a cache hit does not
    see: at worst a real theorem is proved again)."""
    files, seen, stack = [Path(info.file)], set(), list(info.cites)
    while stack:
        m = stack.pop()
        if m in seen or (f := _file_of(m)) is None:
            continue
        seen.add(m)
        files.append(f)
        stack.extend(cites_of(f))
    files += [g for f in list(files) for g in _outside_imports(f, set())]
    for f in files:
        try:
            if b"complex" in f.read_bytes():
                return True
        except OSError:
            return True
    return False


def _replayed(trace: dict, info: TheoremInfo, proved: bool):
    """``(goal claims, {step label: claim}, the goals as written)``: the claims ``trace``
    records, if they rest on no hypothesis but the file's givens and (``proved``) they are
    exactly what the theorem file states (its goals); else None. Decoded, not replayed
    (``_recorded``), except for a statement over C, whose proof must use ring laws only."""
    try:
        theorems, steps = _recorded(trace)
        stated = statement_of(info.module, over_complex=True, shown=True)
    except Exception:  # noqa: BLE001 - a malformed entry, or a file that no longer imports: check it again
        return None
    if stated is None:
        return None
    goals, givens, over_complex, shown = stated
    # the goals alone may not show a complex symbol (RT10-C1: a definition's body does): a
    # file whose sources, or those it cites or imports, say "complex" is held to ring laws
    over_complex = over_complex or _says_complex(info)
    by_label = {name: th for name, th in steps.items() if th.hyps <= set(givens)}
    replayed = None
    if over_complex:        # a step over C is proved only by ring laws (RT10-C2): that needs the derivation
        from verigrad.trace.replay import TraceError
        try:
            replayed = _replay(trace)
        except (TraceError, RecursionError):
            return None
        by_label = {name: th for name, th in by_label.items() if not ring_only(replayed[1][name])}
    if not proved:
        return [], by_label, shown
    if len(theorems) != len(goals) or any((th.lhs, th.rhs) != g for th, g in zip(theorems, goals)):
        return None
    if any(not th.hyps <= set(givens) for th in theorems):
        return None
    # A statement over C holds when its proof uses ring operations only, as a fresh run
    # requires (script._conclude): the kernel's equation does not show that a symbol is
    # complex, so a trace of the real theorem would match (red team RT-16).
    if replayed is not None and any(ring_only(th) for th in replayed[0]):
        return None
    return theorems, by_label, shown


def _store(key: str, rec: TheoremRecord):
    d = cache_dir()
    if rec.status == "proved" and rec.trace is None:
        return                                  # nothing to replay: not cached
    try:
        d.mkdir(parents=True, exist_ok=True)
        for suffix, data in ((".trace.json", rec.trace), (".json", rec.to_json(printed=False))):
            if data is None:
                continue
            tmp = d / f".{key}{suffix}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(data, separators=(",", ":")))
            tmp.replace(d / f"{key}{suffix}")
    except OSError:
        pass


# -- checking many theorems ------------------------------------------------------------------------------

def _worker_init():
    """A worker starts with the parent's modules (forked) but none of its proofs."""
    forget()


def _check_job(job: dict) -> dict:
    """In a worker: one theorem, from the cache if its entry holds there, else proved
    now; the record (JSON), its trace, and a numeric FALSE label if it is unproved."""
    info = TheoremInfo(job["name"], job["module"], job["area"], job["file"], job["cites"])
    if info.area == "file":
        FILES[info.module] = info.file
    rec = _load_cached(job["key"], info) if job["use_cache"] else None
    if rec is None:
        res = run_proof(info.module)
        rec = record_of(res, info)
        if res.log is not None and has_complex(res.log):
            # over C only ring laws hold: a step derived otherwise is not shown proved (RT10-C2)
            for st in rec.steps:
                if st.status == "proved" and (st.theorem is None or ring_only(st.theorem)):
                    st.status = "pending"
        rec = _traced(rec)
    false = ""
    if rec.status == "plausible":
        from .falsify import false_label
        false = false_label(info.module)
    return {"record": rec.to_json(printed=False), "trace": rec.trace, "cached": rec.cached, "false": false}


STATUSES = ("proved", "plausible", "failed")
_TEXT = ("name", "area", "file", "status", "reason", "doc", "statement", "latex", "display")
_STEP_TEXT = ("label", "rule", "status", "kind", "display", "statement", "latex", "note")


def _check_types(rec: TheoremRecord):
    """``TypeError`` unless every field of ``rec`` has the type the printers expect (a
    worker's record is data from a process that ran a theorem file)."""
    def texts(xs):
        return isinstance(xs, list) and all(type(x) is str for x in xs)
    number = (int, float)
    ok = all(type(getattr(rec, f)) is str for f in _TEXT) and texts(rec.axioms) and texts(rec.conditions) \
        and texts(rec.cites) and type(rec.seconds) in number and (rec.line is None or type(rec.line) is int)
    ok = ok and isinstance(rec.steps, list) and all(
        all(type(getattr(st, f)) is str for f in _STEP_TEXT) and texts(st.uses)
        and all(getattr(st, f) is None or type(getattr(st, f)) is int for f in ("index", "line"))
        and (st.name is None or type(st.name) is str) for st in rec.steps)
    if not ok:
        raise TypeError("a field of the wrong type")
    rec.seconds = float(rec.seconds)        # (an int past float's range: OverflowError, RT9-B2)


def _confirmed(info: TheoremInfo, answer, error, print_steps: bool = True) -> TheoremRecord:
    """A worker's answer as a record this process stands behind: "proved" only if this
    process's kernel replays the trace that came with it, and then with the replayed
    theorems' statement, LaTeX, axioms and conditions, never the worker's. A worker
    ran a theorem file, so it may say anything (RT8-C1)."""
    def failed(why):
        return TheoremRecord(info.name, info.area, info.file, "failed", reason=why, doc=info.doc)
    if error is not None:
        return failed(error if error.startswith("timed out:") else f"the checker crashed: {error}")
    try:
        rec = TheoremRecord.from_json(answer["record"])
        _check_types(rec)
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as e:
        return failed(f"the worker's record is malformed: {e}")
    rec.name, rec.area, rec.file, rec.doc = info.name, info.area, info.file, info.doc
    rec.cached = answer.get("cached") is True
    if rec.status not in STATUSES:
        return failed(f"the worker's record has status {rec.status!r}")
    if isinstance(answer.get("false"), str) and answer["false"] and rec.status == "plausible":
        rec.false = answer["false"]     # a label of an unproved theorem, never a verdict
    from verigrad.trace.replay import TraceError
    theorems, by_label, refused = [], {}, None
    trace = answer.get("trace")
    if trace is not None or rec.status == "proved":
        try:
            theorems, by_label = _replay(trace)
            if rec.status == "proved" and not theorems:
                raise TraceError("the trace proves no goal")
        except (TraceError, RecursionError) as e:
            refused = str(e)
    _replayed_steps(rec, by_label)                                  # a step is proved if the replay says so
    for st in rec.steps if print_steps else ():                     # now, while the workers work
        st.statement, st.latex  # noqa: B018 - printed when read
    rec.trace = trace if refused is None else None                  # what the cache keeps
    if rec.status != "proved":
        rec.axioms = []                                             # an unproved record rests on nothing
        return rec
    if refused is not None:
        rec.status, rec.reason, rec.axioms, rec.conditions = (
            "failed", f"REFUSED: the proof's trace does not replay in the kernel: {refused}", [], [])
        return rec
    # What is proved is what the kernel replayed, and it is all this record shows beside
    # "proved": not the goals as the worker says the file writes them (red team RT9-A1: a
    # worker that ran a hostile file sent the trace of |- x = x for a file stating x + 1 =
    # x + 2). Which statement a file makes is known only by running its code, so for a file
    # one does not trust, what verify proves is the statement it prints.
    rec.theorems = theorems
    if why := _not_rare(theorems):
        rec.status, rec.reason, rec.axioms, rec.conditions = "plausible", why, [], []
        return rec
    rec.display = "; ".join(_text_pair(th.lhs, th.rhs) for th in theorems)
    rec.statement = "; ".join(th.statement() for th in theorems)
    rec.latex = "; ".join(th.latex() for th in theorems)
    rec.axioms = sorted({a for th in theorems for a in th.axioms()})
    rec.conditions = sorted({str(c) for th in theorems for c in th.conds})
    return rec


def _not_rare(theorems) -> str | None:
    """Why a side condition of ``theorems`` is not shown to fail only on a set of measure
    zero, or None. A theorem under a condition is a statement about where the condition
    holds: under ``0 != 0``, nowhere (red team RT10-A2: ``x + x = x [under 0 != 0]``, a
    true theorem about nothing, read "proved" for the goal ``x + x = x``). So a condition
    must be an analytic term's ``!= 0`` (or off a kink) shown positive, or not identically
    zero for every size and entry (``conditions.nonzero_null``), as certify requires; ``smooth``
    conditions say where a derivative exists and are shown by the rules that make them."""
    from verigrad.certify.conditions import nonzero_null, piecewise_part, positive_at_every_input
    for th in theorems:
        for c in sorted(th.conds, key=lambda c: (c.kind, c.term.skey)):
            if c.kind == "smooth" or (c.kind in ("nonzero", "offkink") and positive_at_every_input(c.term)):
                continue            # (a term positive at every input: a softmax's denominator)
            if c.kind not in ("nonzero", "offkink"):
                why = f"a condition of kind {c.kind}"
            elif piecewise_part(c.term) is not None:
                why = "its term is not real-analytic"
            else:
                why = nonzero_null(c.term)
            if why:
                return f"the side condition {c} is not shown to fail only on a set of measure zero ({why})"
    return None


def verify_library(patterns=(), jobs: int | None = None, use_cache: bool = True,
                   on_result: Callable | None = None, infos=None, print_steps: bool = True,
                   timeout: float | None = None) -> list:
    """Check the selected theorems (``patterns`` as in ``select``, or ``infos``; all by
    default) in ``jobs`` worker processes: cached results where the content hash matches
    and the entry replays, the rest proved again; each "proved" confirmed here by a
    replay (``_confirmed``). ``on_result(record)`` reports progress. Records come back in
    library order. ``print_steps=False``: each step's text is printed from its replayed
    theorem only when read (a run that shows no steps saves most of its printing).
    ``timeout``: seconds a theorem may take; past it, its worker is stopped and the
    theorem reads failed ("timed out")."""
    from verigrad.trace.replay import replay  # noqa: F401 - loaded before any worker runs a theorem file
    library = load_library()
    infos = select(library, patterns) if infos is None else list(infos)
    by_module = {i.module: i for i in library}
    keys = {i.module: cache_key(i, by_module) for i in infos}
    out: dict = {}

    again = []

    def answered(job, answer, error):
        info = by_job[job["module"]]
        rec = _confirmed(info, answer, error, print_steps)
        if error is not None and error.startswith("timed out:") and timeout:
            rec.seconds = float(timeout)        # it ran for the whole limit, not for no time
        if rec.cached and rec.status == "failed" and job["use_cache"]:
            again.append(dict(job, use_cache=False))    # an entry that does not replay: prove it again
            return
        out[info.module] = rec
        # a failure may come from a broken checker: check again next time; a cache hit is stored already
        if rec.status != "failed" and not rec.cached:
            _store(keys[info.module], rec)
        if on_result:
            on_result(rec)

    by_job = {i.module: i for i in infos}
    todo = [{"name": i.name, "module": i.module, "area": i.area, "file": i.file, "cites": list(i.cites),
             "key": keys[i.module], "use_cache": use_cache, "alone": i.area == "file"} for i in _balanced(infos)]
    from .workers import run_jobs
    for batch in (todo, again):
        run_jobs(batch, _check_job, jobs or os.cpu_count() or 1, answered, init=_worker_init, timeout=timeout)
    return [out[i.module] for i in infos]


def _balanced(todo):
    """Theorems that cite others first (they take longest), so workers finish together."""
    return sorted(todo, key=lambda i: -len(i.cites))
