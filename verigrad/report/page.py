"""The frame every page of the site shares: head, navigation, search box, scripts.

Links are relative (``root`` is ``""`` at the top of the site, ``"../"`` one folder
down), so the site works from ``file://`` wherever it is copied.
"""
from __future__ import annotations

import re

from .markup import Raw, h, text

NAV = (("Theorems", "index.html"), ("Certificates", "certificates.html"), ("Axioms", "axioms.html"))


def layout(title: str, body, root: str = "", here: str = "") -> str:
    """A whole HTML document."""
    nav = [h("a", name, href=root + href, aria_current="page" if href == here else None) for name, href in NAV]
    search = h("div", h("input", id="search", type="search", autocomplete="off", spellcheck="false",
                        placeholder="Search theorems and certificates  ( / )", aria_label="search"),
               h("ol", id="results"), class_="searchbox")
    head = h("head", h("meta", charset="utf-8"),
             h("meta", name="viewport", content="width=device-width, initial-scale=1"),
             h("title", f"{title} · verigrad"), h("link", rel="stylesheet", href=root + "assets/site.css"))
    page = h("body", h("header", h("a", "verigrad", class_="brand", href=root + "index.html"), h("nav", *nav), search,
                       class_="top"),
             h("main", body),
             h("script", src=root + "search-index.js"), h("script", src=root + "assets/search.js"),
             data_root=root)
    return "<!DOCTYPE html>\n" + h("html", head, page, lang="en") + "\n"


_CODE = re.compile(r"``(.+?)``", re.S)


def inline(s: str) -> Raw:
    """Prose with reST-style ``code`` spans."""
    parts = _CODE.split(s)
    return Raw("".join(h("code", p) if k % 2 else text(p) for k, p in enumerate(parts)))


def prose(doc: str) -> Raw:
    """A docstring as paragraphs (blank lines separate them)."""
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", doc.strip()) if p.strip()]
    return Raw("".join(h("p", inline(p)) for p in paras))


def first_sentence(doc: str, limit: int = 160) -> str:
    para = " ".join(re.split(r"\n\s*\n", doc.strip())[0].split()) if doc.strip() else ""
    para = para.replace("``", "")
    cut = re.search(r"(?<=[a-z)\]0-9])\.(\s|$)", para)
    s = para[:cut.start() + 1] if cut and cut.start() < limit else para
    return s if len(s) <= limit else s[:limit - 1].rstrip() + "…"


def seconds(v) -> str:
    return "" if v is None else f"{v:.3f} s" if v < 10 else f"{v:.1f} s"
