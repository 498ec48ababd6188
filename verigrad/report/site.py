"""The offline proof browser: a static site that works from ``file://``.

``write_site(out, theorems, certificates)`` writes::

    index.html                 theorems by area, status badges, the search box
    theorems/<name>.html       statement, proof steps, axioms, citations, source
    certificates.html          every layer, rule and network
    certificates/<kind>-<name>.html   statement, side conditions, block diagram
    axioms.html                the kernel's axioms and who rests on them
    search-index.js            the search index (``window.VERIGRAD_INDEX``)
    search-index.json          the same, for scripts
    theorems.json, certificates.json   the records the site was made from
    assets/site.css, assets/search.js

``theorems``: ``verigrad.proof.TheoremRecord`` objects or their JSON; ``certificates``:
``verigrad.nn.report.Record`` objects or their JSON (precomputed, since certifying
every network takes minutes). Math is MathML, rendered by the browser: no script
library, no font download, no network.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

from . import assets
from .certificate_pages import certificate_href, certificate_page, certificates_page
from .library_pages import Library, axioms_page, index_page, theorem_href, theorem_page
from .markup import TONE
from .page import first_sentence


def theorem_json(rec) -> dict:
    """A theorem record as JSON (from a ``TheoremRecord`` or a dict)."""
    if isinstance(rec, dict):
        return rec
    d = rec.to_json()
    d["cached"] = getattr(rec, "cached", False)
    return d


def certificate_json(rec) -> dict:
    """A certificate record as JSON, without its live kernel theorems."""
    if isinstance(rec, dict):
        return {k: v for k, v in rec.items() if k != "theorems"}
    return {f.name: getattr(rec, f.name) for f in fields(rec) if f.name != "theorems"}


def search_index(theorems: list, certificates: list) -> list:
    """One entry per page: what the search box matches and shows."""
    out = []
    for r in theorems:
        out.append({"name": r["name"], "kind": "theorem", "area": r["area"], "status": r["status"],
                    "tone": TONE.get(r["status"], "none"), "url": theorem_href(r["name"]),
                    "doc": first_sentence(r.get("doc", ""), 200),
                    "text": (r.get("display", "") + " " + r.get("statement", ""))[:800], "axioms": r.get("axioms", [])})
    for r in certificates:
        out.append({"name": r["name"], "kind": r["kind"], "area": "certificates", "status": r["status"],
                    "tone": TONE.get(r["status"], "none"), "url": certificate_href(r),
                    "doc": f"with respect to {', '.join(r.get('wrt', {}))}; sizes {' '.join(r.get('sizes', []))}",
                    "text": r.get("statement", "")[:800], "axioms": r.get("axioms", [])})
    return out


@dataclass
class Site:
    root: Path
    pages: list

    @property
    def index(self) -> Path:
        return self.root / "index.html"


def write_site(out, theorems, certificates=(), progress=None) -> Site:
    """Write the site into the folder ``out`` (created if needed); ``progress(path)`` is
    called for each page written."""
    root = Path(out)
    theorems = sorted((theorem_json(r) for r in theorems), key=lambda r: r["name"])
    certificates = [certificate_json(r) for r in certificates]
    lib = Library(theorems)
    pages = []

    def write(rel: str, content: str):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        pages.append(path)
        if progress:
            progress(rel)

    write("assets/site.css", assets.CSS)
    write("assets/search.js", assets.JS)
    entries = search_index(theorems, certificates)
    write("search-index.js", "window.VERIGRAD_INDEX = " + json.dumps(entries) + ";\n")
    write("search-index.json", json.dumps(entries, indent=1))
    write("theorems.json", json.dumps(theorems, indent=1))
    write("certificates.json", json.dumps(certificates, indent=1, default=str))
    write("index.html", index_page(lib))
    write("axioms.html", axioms_page(lib))
    write("certificates.html", certificates_page(certificates))
    for r in theorems:
        write(theorem_href(r["name"]), theorem_page(r, lib))
    for r in certificates:
        write(certificate_href(r), certificate_page(r))
    return Site(root, pages)
