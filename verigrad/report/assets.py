"""The site's stylesheet and its one script (the search box), written next to the pages.

The script reads the search index from ``search-index.js`` (``window.VERIGRAD_INDEX``):
a ``<script src>`` loads from ``file://`` where ``fetch`` of a JSON file is refused.
"""

CSS = r"""
:root { --fg: #1d2430; --muted: #5b6576; --line: #d8dee8; --bg: #ffffff; --panel: #f5f7fa;
        --good: #1f7a3a; --fair: #16707a; --warn: #9a6400; --bad: #b3261e; --none: #6b7280;
        --cot: #c2410c; --link: #1f5fbf; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
       color: var(--fg); background: var(--bg); }
a { color: var(--link); text-decoration: none; }
a:hover { text-decoration: underline; }
header.top { display: flex; gap: 1.5em; align-items: center; padding: .6em 1.5em;
             border-bottom: 1px solid var(--line); background: var(--panel); position: sticky; top: 0; z-index: 2; }
header.top .brand { font-weight: 700; color: var(--fg); }
header.top nav a { margin-right: 1em; }
.searchbox { position: relative; margin-left: auto; }
.searchbox input { width: 22em; padding: .35em .6em; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
.searchbox ol { position: absolute; right: 0; top: 2.2em; width: 36em; max-height: 70vh; overflow: auto;
                margin: 0; padding: .3em 0; list-style: none; background: var(--bg);
                border: 1px solid var(--line); border-radius: 6px; box-shadow: 0 6px 24px rgba(0,0,0,.12); }
.searchbox ol:empty { display: none; }
.searchbox li { padding: .3em .8em; }
.searchbox li.active, .searchbox li:hover { background: var(--panel); }
.searchbox li .doc { display: block; color: var(--muted); font-size: 85%; white-space: nowrap;
                     overflow: hidden; text-overflow: ellipsis; }
main { max-width: 76em; margin: 0 auto; padding: 1em 1.5em 4em; }
h1 { font-size: 1.6em; margin: .4em 0 .2em; }
h1 code { font-size: 95%; }
h2 { font-size: 1.2em; margin: 1.6em 0 .5em; border-bottom: 1px solid var(--line); padding-bottom: .2em; }
.meta { color: var(--muted); font-size: 90%; }
.meta span + span::before { content: " · "; }
.doc p { margin: .5em 0; }
code, .as-written { font-family: "DejaVu Sans Mono", ui-monospace, monospace; font-size: 88%; }
.badge { display: inline-block; padding: 0 .5em; border-radius: 999px; font-size: 78%; font-weight: 600;
         color: #fff; vertical-align: middle; letter-spacing: .02em; }
.badge.good { background: var(--good); } .badge.fair { background: var(--fair); }
.badge.warn { background: var(--warn); } .badge.bad { background: var(--bad); } .badge.none { background: var(--none); }
table { border-collapse: collapse; width: 100%; font-size: 92%; }
th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
math { font-family: "Latin Modern Math", "STIX Two Math", "DejaVu Math TeX Gyre", "Cambria Math", math; font-size: 110%; }
.math { overflow-x: auto; padding: .4em .2em; }
.statement { background: var(--panel); border-left: 4px solid var(--good); padding: .6em 1em; margin: .6em 0; }
.statement.unproved { border-left-color: var(--warn); }
.reason { color: var(--bad); }
ol.steps { list-style: none; padding: 0; margin: 0; }
ol.steps > li { border: 1px solid var(--line); border-radius: 8px; padding: .5em .9em; margin: .6em 0; scroll-margin-top: 4em; }
ol.steps > li:target { border-color: var(--link); box-shadow: 0 0 0 3px rgba(31,95,191,.18); }
ol.steps > li.pending { border-left: 4px solid var(--warn); }
.step-head { display: flex; flex-wrap: wrap; gap: .3em 1em; align-items: baseline; font-size: 90%; }
.step-head .label { font-weight: 700; font-family: "DejaVu Sans Mono", ui-monospace, monospace; }
.step-head .rule code { background: var(--panel); padding: 0 .3em; border-radius: 4px; }
.step-head .uses a { font-family: "DejaVu Sans Mono", ui-monospace, monospace; }
.step-head .line { color: var(--muted); margin-left: auto; }
.as-written { color: var(--muted); }
.kind { font-size: 75%; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); }
dl.axioms dt { font-family: "DejaVu Sans Mono", ui-monospace, monospace; font-weight: 600; }
dl.axioms dd { margin: 0 0 .5em 1.5em; color: var(--muted); }
.columns { display: grid; grid-template-columns: 1fr 1fr; gap: 1em 2em; }
svg text { font: 12px "DejaVu Sans Mono", ui-monospace, monospace; fill: var(--fg); }
svg.citations .node { fill: var(--bg); stroke-width: 2; }
svg.citations .node.good { stroke: var(--good); } svg.citations .node.warn { stroke: var(--warn); }
svg.citations .node.bad { stroke: var(--bad); } svg.citations .node.none { stroke: var(--none); }
svg.citations .node.self { fill: #e8f0fe; stroke-width: 3; }
svg.citations .edge { stroke: var(--muted); stroke-width: 1.4; }
svg .arrowhead { fill: var(--muted); }
svg.blocks .leaf { fill: #eef3fb; stroke: #7d93b8; }
svg.blocks .frame { fill: none; stroke: #9aa6b8; stroke-dasharray: 5 3; }
svg.blocks .frame-title { font-weight: 700; fill: var(--muted); }
svg.blocks .flow { stroke: #4b5563; stroke-width: 1.4; }
svg.blocks .skip { stroke-dasharray: 1 0; }
svg.blocks .split { fill: #4b5563; }
svg.blocks .sum { fill: #fff; stroke: #4b5563; stroke-width: 1.4; }
svg.blocks .site { fill: #fff4ec; stroke: var(--cot); stroke-width: 1.6; }
svg.blocks .site-name { fill: var(--cot); font-weight: 700; }
svg.blocks .glyph { font-size: 14px; }
svg.blocks .cot { fill: var(--cot); font-size: 11px; }
svg.blocks .legend { fill: var(--muted); font: 11px system-ui, sans-serif; }
.diagram { display: inline-block; max-width: 100%; overflow: auto; border: 1px solid var(--line); border-radius: 8px; padding: .5em; background: #fff; }
details > summary { cursor: pointer; color: var(--muted); }
.conditions code { display: block; white-space: pre-wrap; word-break: break-all; margin: .2em 0; }
.wrt-item { display: inline-block; white-space: nowrap; margin-right: .8em; }
ul.outline, ul.outline ul { list-style: none; padding-left: 1.2em; margin: 0; }
ul.outline .kind-site_residual { color: var(--cot); }
pre.source { background: var(--panel); padding: .6em 0; border-radius: 8px; overflow-x: auto; font-size: 85%; }
pre.source > span { display: block; padding: 0 1em 0 0; }
pre.source > span:target { background: #fff3c4; }
pre.source .ln { display: inline-block; width: 3.2em; padding-right: .8em; text-align: right; color: var(--muted); user-select: none; }
table.facts { width: auto; } table.facts th { width: 12em; }
@media (max-width: 800px) { .columns { grid-template-columns: 1fr; } .searchbox input { width: 12em; } }
"""

JS = r"""
// Client-side search over window.VERIGRAD_INDEX (search-index.js): every word of the
// query must occur in an entry; a match in the name ranks first.
(function () {
  var index = window.VERIGRAD_INDEX || [];
  var root = document.body.getAttribute("data-root") || "";
  var box = document.getElementById("search"), list = document.getElementById("results");
  if (!box || !list) return;
  index.forEach(function (e) {
    e.hay = [e.name, e.area, e.kind, e.status, e.doc, e.text, (e.axioms || []).join(" ")].join(" ").toLowerCase();
  });
  function score(e, words) {
    var s = 0, name = e.name.toLowerCase();
    for (var k = 0; k < words.length; k++) {
      var w = words[k];
      if (name === w) s += 100; else if (name.indexOf(w) >= 0) s += 10;
      else if (e.hay.indexOf(w) >= 0) s += 1; else return 0;
    }
    return s;
  }
  function show(q) {
    var words = q.toLowerCase().split(/\s+/).filter(Boolean);
    list.innerHTML = "";
    if (!words.length) return;
    var hits = index.map(function (e) { return [score(e, words), e]; })
      .filter(function (p) { return p[0] > 0; })
      .sort(function (a, b) { return b[0] - a[0] || (a[1].name < b[1].name ? -1 : 1); })
      .slice(0, 30);
    hits.forEach(function (p, k) {
      var e = p[1], li = document.createElement("li"), a = document.createElement("a");
      var badge = document.createElement("span"), doc = document.createElement("span");
      a.href = root + e.url; a.textContent = e.name; a.className = "hit";
      badge.className = "badge " + e.tone; badge.textContent = e.status;
      doc.className = "doc"; doc.textContent = (e.kind === "theorem" ? "" : e.kind + " · ") + (e.doc || "");
      li.appendChild(a); li.appendChild(document.createTextNode(" ")); li.appendChild(badge); li.appendChild(doc);
      if (k === 0) li.className = "active";
      list.appendChild(li);
    });
    if (!hits.length) {
      var none = document.createElement("li");
      none.textContent = "nothing matches"; none.className = "none";
      list.appendChild(none);
    }
  }
  box.addEventListener("input", function () { show(box.value); });
  box.addEventListener("keydown", function (ev) {
    var first = list.querySelector("a.hit");
    if (ev.key === "Enter" && first) { window.location.href = first.href; }
    if (ev.key === "Escape") { box.value = ""; show(""); }
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "/" && document.activeElement !== box) { ev.preventDefault(); box.focus(); }
  });
  var m = /[#&]q=([^&]*)/.exec(window.location.hash);
  if (m) { box.value = decodeURIComponent(m[1]); show(box.value); }
})();
"""
