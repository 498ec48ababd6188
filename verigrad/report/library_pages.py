"""Pages of the theorem library: the index by area, one page per theorem (statement,
proof steps as math, axioms, citations with their graph, source), and the axioms.

A theorem record is the JSON form of ``verigrad.proof.TheoremRecord`` (``to_json()``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .graph import citation_graph
from .markup import Raw, badge, h, join, slug
from .mathml import mathml
from .page import first_sentence, layout, prose, seconds

LIBRARY = "verigrad.library."


def theorem_name(module: str) -> str:
    """``verigrad.library.softmax.jacobian`` -> ``softmax.jacobian``."""
    return module[len(LIBRARY):] if module.startswith(LIBRARY) else module


def theorem_href(name: str) -> str:
    """A theorem page, relative to the site's root."""
    return f"theorems/{slug(name)}.html"


@dataclass
class Library:
    """The records and the citation graph between them."""
    records: list
    by_name: dict = field(init=False)
    cites: dict = field(init=False)
    cited_by: dict = field(init=False)

    def __post_init__(self):
        self.by_name = {r["name"]: r for r in self.records}
        self.cites = {r["name"]: sorted(theorem_name(m) for m in r.get("cites", [])) for r in self.records}
        self.cited_by = {}
        for a, bs in self.cites.items():
            for b in bs:
                self.cited_by.setdefault(b, []).append(a)

    @property
    def status(self) -> dict:
        return {r["name"]: r["status"] for r in self.records}

    def link(self, name: str, root: str):
        return h("a", name, href=root + theorem_href(name)) if name in self.by_name else h("span", name)


# -- statements -----------------------------------------------------------------------------------------

def kernel_statements(rec: dict) -> list:
    """The kernel's statement of each goal (LaTeX), when the theorem is proved; the
    record joins them with ``; ``."""
    if rec["status"] != "proved" or not rec.get("latex"):
        return []
    return re.split(r";\s+(?=\\vdash )", rec["latex"])


def goals(rec: dict) -> list:
    return [s for s in rec.get("steps", []) if s.get("kind") == "goal"]


def step_anchor(label: str) -> str:
    return "step-" + slug(label)


# -- the index --------------------------------------------------------------------------------------------

def index_page(lib: Library) -> str:
    recs = lib.records
    counts = {k: sum(r["status"] == k for r in recs) for k in ("proved", "plausible", "failed")}
    areas: dict = {}
    for r in recs:
        areas.setdefault(r["area"], []).append(r)
    summary = h("p", f"{len(recs)} theorems in {len(areas)} areas: ",
                join([Raw(f"{counts[k]} {badge(k)}") for k in counts if counts[k]], ", "),
                ". Every step of every proof is re-checked by the kernel; a theorem is ",
                badge("proved"), " only if the kernel proved its goal.", class_="meta")
    toc = h("p", "Areas: ", join([h("a", a, href=f"#area-{slug(a)}") for a in sorted(areas)], " · "))
    sections = []
    for area in sorted(areas):
        rows = [h("tr", h("td", h("a", r["name"], href=theorem_href(r["name"]), class_="theorem")),
                  h("td", badge(r["status"])),
                  h("td", str(sum(s.get("index") is not None for s in r.get("steps", []))), class_="num"),
                  h("td", str(len(r.get("axioms", []))), class_="num"),
                  h("td", first_sentence(r.get("doc", ""))))
                for r in sorted(areas[area], key=lambda r: r["name"])]
        sections.append(h("section", h("h2", area),
                          h("table", h("tr", h("th", "theorem"), h("th", "status"), h("th", "steps"),
                                       h("th", "axioms"), h("th", "")), *rows),
                          id=f"area-{slug(area)}", class_="area"))
    body = [h("h1", "Theorem library"), summary, toc, *sections]
    return layout("Theorems", body, "", "index.html")


# -- a theorem ---------------------------------------------------------------------------------------------

def theorem_page(rec: dict, lib: Library) -> str:
    root = "../"
    name, status = rec["name"], rec["status"]
    file = rec.get("file", "")
    meta = h("p", h("span", "area ", h("a", rec["area"], href=f"{root}index.html#area-{slug(rec['area'])}")),
             h("span", h("a", _short(file), href="#source") if file and Path(file).is_file() else None),
             h("span", "from the cache" if rec.get("cached") else seconds(rec.get("seconds"))), class_="meta")
    body = [h("h1", h("code", name), " ", badge(status)), meta, h("div", prose(rec.get("doc", "")), class_="doc"),
            _statement(rec), _steps(rec, lib, root), _axioms(rec), _citations(rec, lib, root), _source(file)]
    return layout(name, body, root)


def _short(path: str) -> str:
    p = path.replace("\\", "/")
    k = p.find("verigrad/library/")
    return p[k:] if k >= 0 else Path(p).name


def _statement(rec: dict) -> Raw:
    parts = kernel_statements(rec)
    if parts:
        maths = [h("div", mathml(p, display=True), class_="math") for p in parts]
        head = "Statement (as the kernel proved it)"
        cls = "statement"
    else:
        maths = [h("div", mathml(g["latex"], display=True) if g.get("latex") else h("code", g.get("statement")),
                   class_="math") for g in goals(rec)]
        head = "Goal (not proved)"
        cls = "statement unproved"
    out = [h("h2", head, id="statement"), h("div", *maths, class_=cls)]
    if rec.get("display"):
        out.append(h("p", "As written: ", h("code", rec["display"]), class_="meta"))
    if rec.get("conditions"):
        out.append(h("p", "Under the conditions: ", join([h("code", c) for c in rec["conditions"]], "; ")))
    if status_reason(rec):
        out.append(h("p", status_reason(rec), class_="reason"))
    return Raw("".join(out))


def status_reason(rec: dict) -> str:
    if rec["status"] == "proved" or not rec.get("reason"):
        return ""
    return (f"line {rec['line']}: " if rec.get("line") else "") + rec["reason"]


def _rule(rule: str, lib: Library, root: str):
    if rule.startswith("cite "):
        cited = theorem_name(rule[5:])
        return h("span", "cites ", lib.link(cited, root), class_="rule")
    return h("span", h("code", rule), class_="rule")


def _steps(rec: dict, lib: Library, root: str) -> Raw:
    steps = rec.get("steps", [])
    if not steps:
        return Raw("")
    anchors = {s["label"]: step_anchor(s["label"]) for s in steps}
    items = []
    for s in steps:
        uses = [h("a", u, href="#" + anchors[u], class_="use") if u in anchors else h("span", u) for u in s.get("uses", [])]
        head = h("div", h("span", s["label"], class_="label"),
                 h("span", s["kind"], class_="kind") if s.get("kind") not in (None, "step", s.get("rule")) else None,
                 badge("pending") if s.get("status") != "proved" else None,
                 _rule(s.get("rule", ""), lib, root),
                 h("span", "from ", join(uses), class_="uses") if uses else None,
                 h("a", f"line {s['line']}", href=f"#L{s['line']}", class_="line") if s.get("line") else None,
                 class_="step-head")
        math = mathml(s["latex"], display=True) if s.get("latex") else h("code", s.get("statement", ""))
        items.append(h("li", head, h("div", math, class_="math"),
                       h("div", s.get("display", ""), class_="as-written") if s.get("display") else None,
                       h("div", s["note"], class_="meta") if s.get("note") else None,
                       id=anchors[s["label"]], class_="step " + ("proved" if s.get("status") == "proved" else "pending")))
    note = h("p", "Each step is the kernel's reading of what the proof wrote (shown below it); "
                  "“from” links to the earlier steps it used.", class_="meta")
    return Raw(h("h2", "Proof", id="proof") + note + h("ol", *items, class_="steps"))


def _axioms(rec: dict) -> Raw:
    from verigrad.kernel import AXIOMS
    names = rec.get("axioms", [])
    if not names:
        return Raw(h("h2", "Axioms", id="axioms") + h("p", "none recorded", class_="meta"))
    items = []
    for a in names:
        ax = AXIOMS.get(a)
        items += [h("dt", h("a", a, href=f"../axioms.html#ax-{slug(a)}")),
                  h("dd", ax.statement if ax else "(not in this kernel's registry)")]
    return Raw(h("h2", f"Axioms ({len(names)})", id="axioms") + h("dl", *items, class_="axioms"))


def _citations(rec: dict, lib: Library, root: str) -> Raw:
    name = rec["name"]
    cites, cited_by = lib.cites.get(name, []), sorted(lib.cited_by.get(name, []))
    cols = h("div", h("div", h("h3", "Cites"), h("ul", *[h("li", lib.link(c, root)) for c in cites]) if cites
                      else h("p", "nothing", class_="meta")),
             h("div", h("h3", "Cited by"), h("ul", *[h("li", lib.link(c, root)) for c in cited_by]) if cited_by
               else h("p", "nothing in this library", class_="meta")), class_="columns")
    svg = citation_graph(name, lib.cites, lib.status, lambda n: f"{slug(n)}.html")
    graph = h("div", svg, class_="diagram") if svg is not None else None
    return Raw(h("h2", "Citations", id="citations") + cols + (graph or ""))


def _source(file: str) -> Raw:
    try:
        lines = Path(file).read_text().splitlines()
    except (OSError, ValueError):
        return Raw("")
    body = "".join(h("span", h("a", str(k), href=f"#L{k}", class_="ln"), " ", line or " ", id=f"L{k}")
                     for k, line in enumerate(lines, 1))
    return Raw(h("h2", "Source", id="source") + h("pre", Raw(body), class_="source"))


# -- the axioms --------------------------------------------------------------------------------------------

def axioms_page(lib: Library) -> str:
    from verigrad.kernel import AXIOMS
    users: dict = {}
    for r in lib.records:
        for a in r.get("axioms", []):
            users.setdefault(a, []).append(r["name"])
    items = []
    for name in sorted(AXIOMS):
        ax = AXIOMS[name]
        used = sorted(users.get(name, []))
        items.append(h("section", h("h3", h("code", name)), h("p", ax.statement), h("p", ax.why, class_="meta"),
                       h("p", f"used by {len(used)} theorem{'s' if len(used) != 1 else ''}" + (": " if used else ""),
                         join([h("a", u, href=theorem_href(u)) for u in used]), class_="meta"),
                       id=f"ax-{slug(name)}"))
    intro = h("p", f"The kernel's {len(AXIOMS)} axioms (its normal form's rules are axiom schemas): every "
                   "theorem lists those it rests on, transitively.", class_="meta")
    return layout("Axioms", [h("h1", "Axioms"), intro, *items], "", "axioms.html")
