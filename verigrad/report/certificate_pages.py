"""Pages of the certificates: one table of every layer, composition rule and network
(status, axioms, sizes, seconds, float32 error), and a page for each with its kernel
statement, its side conditions and, for a network, its block diagram.

A certificate record is the JSON form of ``verigrad.nn.report.Record``: ``kind``
(layer / rule / network), ``name``, ``status``, ``wrt``, ``axioms``,
``side_conditions``, ``sizes``, ``seconds``, ``float32_error``, ``statement``,
``latex``, ``control``, ``detail``, ``blocks``.
"""
from __future__ import annotations

from .blocks import diagram, outline
from .markup import TONE, Raw, badge, h, join, slug
from .mathml import mathml
from .page import layout, seconds

KINDS = (("layer", "Layers", "each zoo layer's backward, proved equal to the transpose-Jacobian of its forward "
                             "at symbolic sizes"),
         ("rule", "Composition rules", "each combinator's backward rule, proved once over opaque branches; its "
                                       "control (a deliberate bug) must be refuted"),
         ("network", "Networks", "each network's backward, certified by construction from its layers and rules"))


def certificate_href(rec: dict) -> str:
    return f"certificates/{slug(rec['kind'])}-{slug(rec['name'])}.html"


def _error(v) -> str:
    return "" if v is None else "0" if v == 0 else f"{v:.1e}"


def _wrt(wrt: dict) -> Raw:
    return Raw("".join(h("span", h("code", v), " ", badge(s), class_="wrt-item") for v, s in wrt.items()))


def _control(control: dict) -> Raw:
    """A rule's control is a deliberate bug: REFUTED is the outcome that counts."""
    if not control:
        return Raw("")
    ok = control.get("status") == "REFUTED"
    verdict = h("span", "refuted, as it must be" if ok else f"{control.get('status', 'UNKNOWN')}: not refuted",
                class_=f"badge {'good' if ok else 'bad'}")
    return h("span", control.get("bug", ""), " ", verdict)


def certificates_page(records: list) -> str:
    if not records:
        body = [h("h1", "Certificates"),
                h("p", "This build has no certificates: run ", h("code", "verigrad html"), " without ",
                  h("code", "--no-certificates"), ", or pass records with ", h("code", "--certificates-from"), ".",
                  class_="meta")]
        return layout("Certificates", body, "", "certificates.html")
    counts: dict = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    body = [h("h1", "Certificates"),
            h("p", f"{len(records)} certificates: ", join([Raw(f"{n} {badge(s)}") for s, n in sorted(counts.items())]),
              ". PROVED: the kernel proved the backward exact for all sizes.", class_="meta")]
    stored = sorted({r["stored"] for r in records if r.get("stored")})
    if stored:
        # the statuses below were not made by this build: say so where they are counted
        body.append(h("p", f"{sum(bool(r.get('stored')) for r in records)} of these are stored records of an "
                      "earlier build by the same verigrad source, shown as recorded, not certified again (",
                      h("code", stored[0]), "; ", h("code", "verigrad html --no-cache"), " certifies again).",
                      class_="meta stored"))
    for kind, title, what in KINDS:
        rows = [r for r in records if r["kind"] == kind]
        if rows:
            body += [h("h2", title, id=kind + "s"), h("p", what, class_="meta"), _table(kind, rows)]
    return layout("Certificates", body, "", "certificates.html")


def _table(kind: str, rows: list) -> Raw:
    head = ["name", "status", "with respect to", "sizes", "axioms", "seconds"]
    head += ["float32 error"] if kind == "layer" else ["control"] if kind == "rule" else []
    trs = []
    for r in rows:
        axioms = r.get("axioms", [])
        cells = [h("td", h("a", r["name"], href=certificate_href(r), class_="certificate"),
                   " ", h("a", "statement", href=certificate_href(r) + "#statement", class_="meta")),
                 h("td", badge(r["status"])), h("td", _wrt(r.get("wrt", {})), class_="wrt"),
                 h("td", " ".join(r.get("sizes", []))),
                 h("td", str(len(axioms)), class_="num", title=", ".join(axioms)),
                 h("td", seconds(r.get("seconds")), class_="num")]
        if kind == "layer":
            cells.append(h("td", _error(r.get("float32_error")), class_="num",
                           title="max relative error of the float32 backward against float64"))
        elif kind == "rule":
            cells.append(h("td", _control(r.get("control", {}))))
        trs.append(h("tr", *cells, class_=f"tone-{TONE.get(r['status'], 'none')}"))
    return h("table", h("tr", *[h("th", c) for c in head]), *trs)


def certificate_page(rec: dict) -> str:
    root = "../"
    kind = rec["kind"]
    facts = [("status", badge(rec["status"])), ("with respect to", _wrt(rec.get("wrt", {}))),
             ("sizes (for all values)", " ".join(rec.get("sizes", [])) or "none"),
             ("seconds", seconds(rec.get("seconds")))]
    if rec.get("stored"):
        facts.append(("made", "by an earlier build of this site with the same verigrad source (a stored record, "
                              "not re-certified for this page; `verigrad html --no-cache` certifies again)"))
    if kind == "layer":
        facts.append(("float32 error", _error(rec.get("float32_error")) or "not measured"))
    if rec.get("control"):
        c = rec["control"]
        facts.append(("control", _control(c)))
        if c.get("counterexample"):
            facts.append(("counterexample", h("code", c["counterexample"])))
    body = [h("p", h("a", "Certificates", href=root + "certificates.html"), " › ", kind, class_="meta"),
            h("h1", h("code", rec["name"]), " ", badge(rec["status"])),
            h("table", *[h("tr", h("th", k), h("td", v)) for k, v in facts], class_="facts")]
    if kind == "network" and rec.get("blocks"):
        body += [h("h2", "Block structure", id="blocks"),
                 h("p", "Data flows down. At a drop-path site the branch is scaled per example before the skip "
                        "add, so in the backward pass the skip receives the raw cotangent and the branch the "
                        "scaled one.", class_="meta"),
                 h("div", diagram(rec["blocks"], f"block structure of {rec['name']}"), class_="diagram"),
                 h("details", h("summary", "as an outline"), h("ul", outline(rec["blocks"]), class_="outline"))]
    body.append(h("h2", "Statement", id="statement"))
    if rec.get("latex"):
        first = next(iter(rec.get("wrt", {})), "")
        body += [h("p", f"The kernel's theorem for {first}:" if first else "The kernel's theorem:", class_="meta"),
                 h("div", h("div", mathml(rec["latex"], display=True), class_="math"), class_="statement")]
    else:
        body.append(h("p", "No theorem: nothing was proved.", class_="reason"))
    if rec.get("detail"):
        body += [h("h3", "Not proved"), h("p", rec["detail"], class_="reason")]
    conds = rec.get("side_conditions", [])
    if conds:
        where = rec.get("where", [])
        shared = [h("p", f"where the {len(where)} subterms they share are", class_="meta"),
                  *[h("code", d) for d in where]] if where else []
        body += [h("h3", f"Side conditions ({len(conds)})"),
                 h("details", h("summary", "where the statement needs them (a kink, a positive argument)"),
                   *[h("code", c) for c in conds], *shared, class_="conditions")]
    axioms = rec.get("axioms", [])
    body += [h("h3", f"Axioms ({len(axioms)})"),
             h("p", join([h("a", a, href=f"{root}axioms.html#ax-{slug(a)}") for a in axioms]) if axioms else "none")]
    return layout(f"{kind} {rec['name']}", body, root)
