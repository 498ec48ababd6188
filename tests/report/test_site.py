"""The static site: a page per theorem and certificate, every link resolving offline,
statuses shown as the records say (never better), math as MathML."""
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from verigrad.proof import load_library
from verigrad.report.certificate_pages import certificate_href
from verigrad.report.library_pages import step_anchor, theorem_href
from verigrad.report.site import certificate_json, theorem_json, write_site


class Page(HTMLParser):
    """The ids, links and elements of one HTML file."""

    def __init__(self, path: Path):
        super().__init__()
        self.path, self.ids, self.links, self.tags = path, [], [], []
        self.feed(path.read_text())

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "id" in a:
            self.ids.append(a["id"])
        for k in ("href", "src"):
            if a.get(k):
                self.links.append((tag, a[k]))


@pytest.fixture(scope="module")
def pages(site):
    """Every HTML file of the site, by its resolved path."""
    return {p.resolve(): Page(p.resolve()) for p in site.root.rglob("*.html")}


def test_a_page_for_every_theorem_and_certificate(site, theorem_records, certificate_records):
    assert {i.name for i in load_library()} == {r.name for r in theorem_records}
    for r in theorem_records:
        assert (site.root / theorem_href(r.name)).is_file(), r.name
    for r in certificate_records:
        assert (site.root / certificate_href(certificate_json(r))).is_file(), r.name
    index = (site.root / "index.html").read_text()
    assert all(f'href="{theorem_href(r.name)}"' in index for r in theorem_records)


def test_every_link_resolves_offline(site, pages):
    """Relative links only; each file exists and each #anchor is an id there. Nothing is
    fetched from the network (no CDN, no http(s) source)."""
    checked = 0
    for page in pages.values():
        assert len(set(page.ids)) == len(page.ids), f"{page.path.name}: an id used twice"
        for tag, link in page.links:
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc, f"{page.path.name}: {tag} links outside: {link}"
            target = (page.path.parent / unquote(parts.path)).resolve() if parts.path else page.path
            assert target.is_file(), f"{page.path.relative_to(site.root)}: broken link {link}"
            assert site.root.resolve() in target.parents
            if parts.fragment and target.suffix == ".html" and not parts.fragment.startswith("q="):
                ids = pages[target].ids
                assert parts.fragment in ids, f"{page.path.relative_to(site.root)}: no #{parts.fragment} in {link}"
            checked += 1
    assert checked > 1000


def test_theorem_page_shows_the_steps_and_links_each_to_the_steps_it_used(site, pages, theorem_records):
    rec = next(r for r in theorem_records if r.name == "attention.relative_position")
    page = pages[(site.root / theorem_href(rec.name)).resolve()]
    html = page.path.read_text()
    step_items = [a for t, a in page.tags if t == "li" and "step" in a.get("class", "")]
    assert [a["id"] for a in step_items] == [step_anchor(s.label) for s in rec.steps]
    assert len(set(page.ids)) == len(page.ids) and "step-Eq-0" in page.ids
    used = [s for s in rec.steps if s.uses]
    assert used, "the seed proof uses earlier steps"
    for s in used:
        for u in s.uses:
            target = next(x for x in rec.steps if x.label == u)
            assert rec.steps.index(target) < rec.steps.index(s)
            assert f'href="#{step_anchor(u)}"' in html
    assert html.count("<math") >= len(rec.steps) + len(rec.theorems)
    assert 'class="tex"' not in html                   # every formula became MathML
    assert "Statement (as the kernel proved it)" in html
    for ax in rec.axioms:
        assert f'href="../axioms.html#ax-{ax}"' in html


def test_no_formula_falls_back_to_source(site, theorem_records, certificate_records):
    """Every statement and step of the library, and every certificate's statement
    (generated names such as ``dy@layer_norm``, entries of comprehensions), is MathML."""
    for r in theorem_records:
        assert 'class="tex"' not in (site.root / theorem_href(r.name)).read_text(), r.name
    for r in certificate_records:
        assert 'class="tex"' not in (site.root / certificate_href(certificate_json(r))).read_text(), r.name


def test_citations_both_ways_with_a_graph(site, theorem_records):
    citer = next(r for r in theorem_records if r.name == "softmax.cross_entropy_gradient")
    cited = "softmax.cross_entropy_is_logsumexp_minus_logit"
    html = (site.root / theorem_href(citer.name)).read_text()
    assert f'href="{cited}.html"' in html and "<svg" in html
    # transitively: cross_entropy_is_logsumexp_minus_logit cites log_softmax
    assert ">softmax.log_softmax</text>" in html
    back = (site.root / theorem_href(cited)).read_text()
    assert f'href="{citer.name}.html"' in back.split('id="citations"')[1]
    lonely = (site.root / theorem_href("matrix.swap_is_involution")).read_text()
    assert 'class="citations"' not in lonely


def test_search_index_covers_theorems_and_certificates(site, theorem_records, certificate_records):
    js = (site.root / "search-index.js").read_text()
    assert js.startswith("window.VERIGRAD_INDEX = ") and js.rstrip().endswith(";")
    entries = json.loads(js[len("window.VERIGRAD_INDEX = "):].rstrip().rstrip(";"))
    assert entries == json.loads((site.root / "search-index.json").read_text())
    names = {(e["kind"], e["name"]) for e in entries}
    assert {("theorem", r.name) for r in theorem_records} <= names
    assert {(r.kind, r.name) for r in certificate_records} <= names
    assert all((site.root / e["url"]).is_file() for e in entries)


def test_certificates_page_lists_every_record_with_its_facts(site, certificate_records):
    html = (site.root / "certificates.html").read_text()
    for r in certificate_records:
        assert f'href="{certificate_href(certificate_json(r))}"' in html
    dense = next(r for r in certificate_records if r.name == "dense")
    assert f"{dense.float32_error:.1e}" in html
    assert html.count("refuted, as it must be") == sum(r.kind == "rule" for r in certificate_records)


def test_network_page_draws_the_block_structure(site, certificate_records):
    mlp = certificate_json(next(r for r in certificate_records if r.kind == "network"))
    html = (site.root / certificate_href(mlp)).read_text()
    assert 'class="blocks"' in html and ">fc1: dense<" in html and ">head: dense<" in html
    assert 'id="statement"' in html and "<math" in html


# -- records that are not proved, and hostile text ------------------------------------------------------

@pytest.fixture(scope="module")
def odd_site(tmp_path_factory, theorem_records):
    """A plausible theorem, an UNKNOWN and a REFUTED certificate, and a docstring with markup."""
    good = theorem_json(next(r for r in theorem_records if r.name == "softmax.sums_to_one"))
    plausible = dict(good, name="softmax.unfinished", status="plausible", reason="the goal is not reached",
                     line=14, latex="", statement="", axioms=[],
                     doc="Unfinished: <script>alert('x')</script> & more.")
    unknown = {"kind": "layer", "name": "mystery", "status": "UNKNOWN", "wrt": {"x": "UNKNOWN"},
               "detail": "x: the importer cannot take it", "sizes": ["B"], "seconds": 0.1}
    refuted = {"kind": "rule", "name": "bad rule", "status": "PROVED", "wrt": {"x": "PROVED"},
               "control": {"bug": "the skip dropped", "status": "UNKNOWN", "counterexample": ""}}
    root = tmp_path_factory.mktemp("odd")
    write_site(root, [good, plausible], [unknown, refuted])
    return root


def test_a_plausible_theorem_is_not_shown_as_proved(odd_site):
    html = (odd_site / theorem_href("softmax.unfinished")).read_text()
    assert "Goal (not proved)" in html and "as the kernel proved it" not in html
    assert re.search(r'class="badge warn"[^>]*>plausible<', html)
    assert 'class="badge good"' not in html.split("<main>")[1].split('id="proof"')[0]
    assert "line 14: the goal is not reached" in html
    index = (odd_site / "index.html").read_text()
    assert "1 <span" in index and ">plausible<" in index


def test_text_is_escaped(odd_site):
    html = (odd_site / theorem_href("softmax.unfinished")).read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html


def test_an_unknown_certificate_and_an_unrefuted_control_are_never_green(odd_site):
    html = (odd_site / "certificates.html").read_text()
    row = html.split('href="certificates/layer-mystery.html"')[1].split("</tr>")[0]
    assert "badge none" in row and "badge good" not in row
    rule = html.split('href="certificates/rule-bad-rule.html"')[1].split("</tr>")[0]
    assert "not refuted" in rule and "badge bad" in rule
    page = (odd_site / "certificates/layer-mystery.html").read_text()
    assert "No theorem: nothing was proved." in page and "the importer cannot take it" in page
