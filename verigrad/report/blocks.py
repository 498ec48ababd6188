r"""A network's block structure as an SVG diagram: data flows down, and each path is
labelled with the cotangent it receives in the backward pass.

The input is a network certificate's ``blocks``: its combinator tree (``name``,
``kind``, ``children``, ``site``), as ``verigrad.nn.report.tree`` gives it. Each kind
is drawn as its rule reads (``verigrad.nn.combinators``):

- ``chain(f, g)``: f above g.
- ``named(p, f)``: a dashed frame titled p around f (one box ``p: f`` for a layer).
- ``residual(f)``: ``x + f(x)``; the skip and the branch both receive ``dy``.
- ``site_residual(f, s)``: ``x + s * f(x)``; the branch passes a ``× s`` node before
  the sum, so the skip receives the raw cotangent ``dy`` and the branch ``s·dy``.
- ``fan_in(f, g)``: ``f(x) + g(x)``; both branches receive ``dy``.

Layout is recursive: every part is a box with a width, a height and a port (the x
offset where data enters at the top and leaves at the bottom); a parent places its
children by their ports, so the main line stays straight through skips and frames.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .markup import Raw, h

CHAR = 7.0          # px per character at the diagram's 12 px font
BOX_H = 26
GAP = 22            # between parts of a chain (room for an arrow)
LANE = 64           # width of a skip lane
R = 9               # radius of a sum or site node


@dataclass
class Box:
    w: float
    h: float
    port: float                              # x offset of the in and out port
    draw: Callable[[float, float], list]     # (x, y) of the top-left corner -> svg elements


def _arrow(x1, y1, x2, y2, cls="flow"):
    return h("line", x1=_n(x1), y1=_n(y1), x2=_n(x2), y2=_n(y2), class_=cls, marker_end="url(#arrow)")


def _path(d, cls="flow", arrow=True):
    return h("path", d=d, class_=cls, fill="none", marker_end="url(#arrow)" if arrow else None)


def _n(v) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _label(x, y, s, cls="cot", anchor="start"):
    return h("text", s, x=_n(x), y=_n(y), class_=cls, text_anchor=anchor)


def _width(s: str) -> float:
    return CHAR * len(s) + 20


# -- the parts -------------------------------------------------------------------------------------

def leaf(label: str, title: str = "") -> Box:
    w = max(80.0, _width(label))

    def draw(x, y):
        return [h("g", h("title", title or label),
                  h("rect", x=_n(x), y=_n(y), width=_n(w), height=BOX_H, rx=4, class_="leaf"),
                  _label(x + w / 2, y + BOX_H / 2 + 4, label, "name", "middle"), class_="block")]
    return Box(w, BOX_H, w / 2, draw)


def chain(parts: list) -> Box:
    if not parts:
        return leaf("identity")
    port = max(p.port for p in parts)
    w = port + max(p.w - p.port for p in parts)
    hgt = sum(p.h for p in parts) + GAP * (len(parts) - 1)

    def draw(x, y):
        out, top = [], y
        for k, p in enumerate(parts):
            if k:
                out.append(_arrow(x + port, top - GAP, x + port, top))
            out += p.draw(x + port - p.port, top)
            top += p.h + GAP
        return out
    return Box(w, hgt, port, draw)


def frame(title: str, inner: Box) -> Box:
    pad, head = 10, 18
    w = max(inner.w + 2 * pad, _width(title))
    dx = (w - inner.w) / 2
    hgt = inner.h + head + 2 * pad

    def draw(x, y):
        cx = x + dx + inner.port
        return [h("rect", x=_n(x), y=_n(y), width=_n(w), height=_n(hgt), rx=6, class_="frame"),
                _label(x + 6, y + 13, title, "frame-title"),
                h("line", x1=_n(cx), y1=_n(y), x2=_n(cx), y2=_n(y + head + pad), class_="flow"),
                *inner.draw(x + dx, y + head + pad),
                h("line", x1=_n(cx), y1=_n(y + head + pad + inner.h), x2=_n(cx), y2=_n(y + hgt), class_="flow")]
    return Box(w, hgt, dx + inner.port, draw)


def _node(cx, cy, glyph, cls):
    return h("g", h("circle", cx=_n(cx), cy=_n(cy), r=R, class_=cls),
             _label(cx, cy + 4, glyph, "glyph", "middle"))


def residual(branch: Box, site: str | None = None) -> Box:
    """``x + f(x)`` (or ``x + s * f(x)``): the branch on the main line, the skip in a
    lane on the right, meeting at a sum node."""
    top = 14                                     # the split
    site_h = 2 * R + 24 if site else 0
    port = max(branch.port, 28.0)                # room for the site's name on the left
    w = port + (branch.w - branch.port) + LANE
    hgt = top + 10 + branch.h + site_h + 14 + 2 * R + 10

    def draw(x, y):
        cx, lane = x + port, x + w - LANE / 2
        by = y + top + 10                        # branch top
        sy = by + branch.h + 16 + R              # site node centre
        py = by + branch.h + site_h + 14 + R     # sum node centre
        out = [h("line", x1=_n(cx), y1=_n(y), x2=_n(cx), y2=_n(by), class_="flow"),
               h("circle", cx=_n(cx), cy=_n(y + top), r=2.5, class_="split"),
               *branch.draw(cx - branch.port, by)]
        if site:
            out += [_arrow(cx, by + branch.h, cx, sy - R), _node(cx, sy, "×", "site"),
                    _label(cx - R - 4, sy + 4, site, "site-name", "end"),
                    _arrow(cx, sy + R, cx, py - R),
                    _label(cx + 6, by + branch.h + 12, f"{site}·dy", "cot"),
                    _label(cx + 6, sy + R + 14, "dy", "cot")]
        else:
            out += [_arrow(cx, by + branch.h, cx, py - R), _label(cx + 6, py - R - 4, "dy", "cot")]
        out += [_path(f"M{_n(cx)},{_n(y + top)} H{_n(lane)} V{_n(py)} H{_n(cx + R)}", "flow skip"),
                _label(lane + 5, (y + top + py) / 2, "dy", "cot"),
                _node(cx, py, "+", "sum"),
                h("line", x1=_n(cx), y1=_n(py + R), x2=_n(cx), y2=_n(y + hgt), class_="flow")]
        return out
    return Box(w, hgt, port, draw)


def fan_in(branches: list) -> Box:
    """``f(x) + g(x) + ...``: the branches side by side, each receiving ``dy``."""
    gap = 24
    w = sum(b.w for b in branches) + gap * (len(branches) - 1)
    top, body = 14, max(b.h for b in branches)
    hgt = top + 10 + body + 14 + 2 * R + 10
    ports, x0 = [], 0.0
    for b in branches:
        ports.append(x0 + b.port)
        x0 += b.w + gap
    port = (ports[0] + ports[-1]) / 2

    def draw(x, y):
        cx, by = x + port, y + top + 10
        py = by + body + 14 + R
        out = [h("line", x1=_n(cx), y1=_n(y), x2=_n(cx), y2=_n(y + top), class_="flow"),
               h("circle", cx=_n(cx), cy=_n(y + top), r=2.5, class_="split"),
               h("line", x1=_n(x + ports[0]), y1=_n(y + top), x2=_n(x + ports[-1]), y2=_n(y + top), class_="flow")]
        bx = x
        for b, p in zip(branches, ports):
            out += [h("line", x1=_n(x + p), y1=_n(y + top), x2=_n(x + p), y2=_n(by), class_="flow"),
                    *b.draw(bx, by)]
            end = by + b.h
            tx = cx - R if x + p < cx else cx + R if x + p > cx else cx
            out += [_path(f"M{_n(x + p)},{_n(end)} V{_n(py)} H{_n(tx)}" if x + p != cx else
                          f"M{_n(cx)},{_n(end)} V{_n(py - R)}"),
                    _label(x + p + 5, py - 12, "dy", "cot")]
            bx += b.w + gap
        out += [_node(cx, py, "+", "sum"),
                h("line", x1=_n(cx), y1=_n(py + R), x2=_n(cx), y2=_n(y + hgt), class_="flow")]
        return out
    return Box(w, hgt, port, draw)


# -- the tree ---------------------------------------------------------------------------------------

def layout(node: dict) -> Box:
    """The box of a combinator tree node (a table from kind to part)."""
    kind, kids = node.get("kind", "leaf"), node.get("children", [])
    if kind == "named":
        if len(kids) == 1 and kids[0].get("kind") == "leaf":
            return leaf(f"{node['name']}: {kids[0]['name']}", f"{node['name']} (a {kids[0]['name']} layer)")
        return frame(node["name"], chain([layout(c) for c in kids]))
    if kind == "chain":
        return chain([layout(c) for c in kids])
    if kind in ("residual", "site_residual"):
        return residual(chain([layout(c) for c in kids]), node.get("site") if kind == "site_residual" else None)
    if kind == "fan_in":
        return fan_in([layout(c) for c in kids])
    if kind == "leaf":
        return leaf(node.get("name", "?"))
    return frame(f"{kind} {node.get('name', '')}".strip(), chain([layout(c) for c in kids]))


_DEFS = h("defs", h("marker", h("path", d="M0,0 L8,4 L0,8 z", class_="arrowhead"), id="arrow", viewBox="0 0 8 8",
                    refX=7, refY=4, markerWidth=7, markerHeight=7, orient="auto-start-reverse"))


def diagram(tree: dict, title: str = "") -> Raw:
    """The whole network: input ``x`` on top, output ``y`` at the bottom, the cotangent
    ``dy`` entering from below."""
    body = chain([leaf("x (input)"), layout(tree), leaf("y (output)")])
    m = 12
    w, hgt = body.w + 2 * m, body.h + 2 * m + 18
    parts = body.draw(m, m)
    legend = "labels in colour: the cotangent each path receives in the backward pass"
    if not any('class="cot"' in p for p in parts):
        legend, hgt = "", hgt - 18                # a plain chain: every part receives the one cotangent
    return h("svg", h("title", title or "block structure"), _DEFS, *parts,
             _label(m, hgt - 8, legend, "legend") if legend else None,
             xmlns="http://www.w3.org/2000/svg", class_="blocks", width=_n(max(w, 420)), height=_n(hgt),
             viewBox=f"0 0 {_n(max(w, 420))} {_n(hgt)}", role="img")


def outline(node: dict) -> Raw:
    """The same tree as a nested list (for reading and for search)."""
    kind, kids = node.get("kind", "leaf"), node.get("children", [])
    what = {"chain": "chain", "fan_in": "fan-in (branches added)", "residual": "residual: x + f(x)",
            "named": f"{node.get('name')}", "leaf": node.get("name", "?")}.get(kind, kind)
    if kind == "site_residual":
        s = node.get("site")
        what = f"site residual: x + {s}·f(x); the skip receives dy, the branch {s}·dy"
    return h("li", h("span", what, class_=f"kind-{kind}"), h("ul", *[outline(c) for c in kids]) if kids else None)
