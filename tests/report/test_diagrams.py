"""Block diagrams of networks and the citation graph: what they draw, from small trees
and graphs written out here."""
import re

from verigrad.report.blocks import diagram, layout, outline
from verigrad.report.graph import citation_graph, neighbourhood


def leaf(name):
    return {"name": name, "kind": "leaf", "children": []}


def named(name, child):
    return {"name": name, "kind": "named", "children": [child]}


def chain(*children):
    return {"name": "chain", "kind": "chain", "children": list(children)}


def site_block(site):
    return {"name": "site_residual", "kind": "site_residual", "site": site,
            "children": [chain(named("ln1", leaf("layer_norm")), named("attn", leaf("mhsa")))]}


def labels(svg, cls):
    return re.findall(rf'<text[^>]*class="{cls}"[^>]*>([^<]*)</text>', svg)


def test_a_site_residual_feeds_the_raw_cotangent_to_the_skip_and_the_scaled_one_to_the_branch():
    svg = diagram(chain(site_block("sA"), {"name": "residual", "kind": "residual", "children": [leaf("mlp")]}))
    assert labels(svg, "site-name") == ["sA"]                    # one site node, named
    assert svg.count('class="site"') == 1 and svg.count('class="sum"') == 2
    cot = labels(svg, "cot")
    assert cot.count("sA·dy") == 1                               # the branch: the scaled cotangent
    assert cot.count("dy") == 4                                  # skip + after the site; skip + branch of the residual
    assert "the skip receives dy, the branch sA·dy" in outline(site_block("sA"))


def test_a_plain_residual_has_no_site_and_no_scaled_cotangent():
    svg = diagram({"name": "residual", "kind": "residual", "children": [leaf("mlp")]})
    assert 'class="site"' not in svg and not labels(svg, "site-name")
    assert all("·" not in c for c in labels(svg, "cot"))


def test_fan_in_gives_each_branch_the_cotangent():
    svg = diagram({"name": "fan_in", "kind": "fan_in",
                   "children": [chain(named("conv1", leaf("conv2d")), leaf("relu")), named("proj", leaf("conv2d"))]})
    assert labels(svg, "cot") == ["dy", "dy"] and svg.count('class="sum"') == 1
    assert ">conv1: conv2d<" in svg and ">proj: conv2d<" in svg


def test_layout_keeps_every_part_inside_the_picture():
    tree = chain(leaf("flatten"), named("block0", chain(site_block("sA"), site_block("sM"))), named("head", leaf("dense")))
    box = layout(tree)
    svg = diagram(tree)
    width, height = (float(v) for v in re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups())
    assert width >= box.w and height >= box.h
    for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg):
        assert 0 <= float(x) and float(x) + float(w) <= width + 0.1
    assert ">block0<" in svg                                      # a named group is a titled frame


def test_a_plain_chain_needs_no_cotangent_legend():
    assert "backward pass" not in diagram(chain(leaf("flatten"), named("head", leaf("dense"))))


CITES = {"a": ["b"], "b": ["c"], "d": ["a"], "e": ["a", "c"], "f": []}


def test_neighbourhood_layers_premises_left_and_users_right_by_the_longest_chain():
    layers = neighbourhood("a", CITES)
    assert layers == {"a": 0, "b": -1, "c": -2, "d": 1, "e": 1}
    assert neighbourhood("c", CITES) == {"c": 0, "b": 1, "a": 2, "e": 3, "d": 3}


def test_citation_graph_links_each_other_theorem_and_draws_every_edge():
    svg = citation_graph("a", CITES, {"a": "proved", "b": "plausible"}, lambda n: f"{n}.html")
    for n in "bcde":
        assert f'href="{n}.html"' in svg
    assert 'href="a.html"' not in svg                             # the theorem itself is not a link
    assert svg.count('class="edge"') == 5                         # b-a, c-b, a-d, a-e, c-e
    assert 'class="node warn"' in svg and 'class="node good self"' in svg
    assert citation_graph("f", CITES, {}, str) is None
