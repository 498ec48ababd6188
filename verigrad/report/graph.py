"""A theorem's neighbourhood in the citation graph, drawn as SVG.

Columns are layers of a longest-path layering around the theorem: what it cites
(transitively) to its left, what cites it (transitively) to its right, so every
arrow points right, from a premise to a theorem that uses it. Each node links to its
theorem's page and is outlined in its status colour.
"""
from __future__ import annotations

from typing import Callable

from .markup import TONE, Raw, h

CHAR = 7.2          # px per character of a node's name (12 px monospace)
ROW = 34
COL_GAP = 56
NODE_H = 24


def _depths(start: str, succ: Callable[[str], list]) -> dict:
    """Longest path length from ``start`` to every node reachable through ``succ``."""
    order, seen = [], set()

    def visit(n):                         # post-order: a node after all it reaches
        seen.add(n)
        for m in succ(n):
            if m not in seen:
                visit(m)
        order.append(n)
    visit(start)
    depth = dict.fromkeys(order, 0)
    for n in reversed(order):             # reverse post-order is topological: start first
        for m in succ(n):
            depth[m] = max(depth[m], depth[n] + 1)
    return depth


def neighbourhood(center: str, cites: dict) -> dict:
    """``{name: layer}``: ``-k`` for a theorem ``center`` rests on through ``k`` citations
    (the longest chain), ``+k`` for one that rests on ``center``."""
    cited_by: dict = {}
    for a, bs in cites.items():
        for b in bs:
            cited_by.setdefault(b, []).append(a)
    layers = {n: -d for n, d in _depths(center, lambda n: sorted(cites.get(n, []))).items()}
    layers.update({n: d for n, d in _depths(center, lambda n: sorted(cited_by.get(n, []))).items() if n != center})
    return layers


def citation_graph(center: str, cites: dict, status: dict, href: Callable[[str], str]) -> Raw | None:
    """SVG of ``center`` and the theorems it cites or is cited by, transitively; ``None``
    if there are none. ``cites``: name -> names it cites; ``href``: name -> link."""
    layers = neighbourhood(center, cites)
    if len(layers) == 1:
        return None
    cols: dict = {}
    for n, k in layers.items():
        cols.setdefault(k, []).append(n)
    keys = sorted(cols)
    widths = {k: max(CHAR * len(n) + 16 for n in cols[k]) for k in keys}
    tall = max(len(v) for v in cols.values())
    height = tall * ROW + 16
    pos, x = {}, 8.0
    for k in keys:
        names = sorted(cols[k])
        y0 = 8 + (height - 16 - len(names) * ROW) / 2
        for r, n in enumerate(names):
            pos[n] = (x, y0 + r * ROW + (ROW - NODE_H) / 2, widths[k])
        x += widths[k] + COL_GAP
    width = x - COL_GAP + 8
    edges = []
    for a in layers:
        for b in cites.get(a, []):
            if b in pos:
                (xb, yb, wb), (xa, ya, _) = pos[b], pos[a]
                x1, y1, x2, y2 = xb + wb, yb + NODE_H / 2, xa - 2, ya + NODE_H / 2
                mid = (x1 + x2) / 2
                edges.append(h("path", d=f"M{x1:.1f},{y1:.1f} C{mid:.1f},{y1:.1f} {mid:.1f},{y2:.1f} {x2:.1f},{y2:.1f}",
                               class_="edge", fill="none", marker_end="url(#cite-arrow)"))
    nodes = []
    for n, (x, y, w) in pos.items():
        tone = TONE.get(status.get(n, ""), "none")
        box = [h("title", f"{n} ({status.get(n, 'not in this build')})"),
               h("rect", x=f"{x:.1f}", y=f"{y:.1f}", width=f"{w:.1f}", height=NODE_H, rx=5,
                 class_=f"node {tone}" + (" self" if n == center else "")),
               h("text", n, x=f"{x + w / 2:.1f}", y=f"{y + NODE_H / 2 + 4:.1f}", text_anchor="middle")]
        nodes.append(h("g", *box) if n == center else h("a", *box, href=href(n)))
    defs = h("defs", h("marker", h("path", d="M0,0 L8,4 L0,8 z", class_="arrowhead"), id="cite-arrow",
                       viewBox="0 0 8 8", refX=7, refY=4, markerWidth=7, markerHeight=7, orient="auto"))
    return h("svg", h("title", f"citations around {center}"), defs, *edges, *nodes,
             xmlns="http://www.w3.org/2000/svg", class_="citations", width=f"{width:.0f}", height=f"{height:.0f}",
             viewBox=f"0 0 {width:.0f} {height:.0f}", role="img")
