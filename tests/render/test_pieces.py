"""The manifest's certificates of the pieces: the network's backward certified by
construction (at a symbolic batch when rendered by name) and the loss's; a network
with a buggy layer is not PROVED; without ``certify`` the entries say UNKNOWN."""
import json

from verigrad.nn import layers as L
from verigrad.nn.layers.zoo import ZOO
from verigrad.render import configure, render
from verigrad.render.pieces import certify_pieces


def test_rendered_by_name_the_network_is_certified_for_every_batch(tmp_path):
    out = render("mlp", tmp_path / "mlp", batch=4, opt="sgd", tie=False, certify=True)
    certs = json.loads((out / "manifest.json").read_text())["certificates"]
    net, loss = certs["network_backward"], certs["loss_backward"]
    assert net["status"] == "PROVED" and "B" in net["sizes"]
    assert set(net["wrt"]) == {"x@net.0", "fc1/W", "fc1/b", "head/W", "head/b"}
    assert set(net["wrt"].values()) == {"PROVED"} and net["axioms"]
    assert loss["status"] == "PROVED" and loss["layer"] == "softmax_xent" and loss["statement"].startswith("|-")
    assert certs["render_tie"]["status"] == "UNKNOWN"


def test_without_certify_the_pieces_say_unknown(tmp_path):
    out = render("mlp", tmp_path / "mlp", batch=4, opt="sgd", tie=False)
    certs = json.loads((out / "manifest.json").read_text())["certificates"]
    assert {certs[k]["status"] for k in ("network_backward", "loss_backward")} == {"UNKNOWN"}


def test_a_network_with_a_buggy_layer_is_not_proved(monkeypatch):
    def buggy_dense(*a, **k):
        layer = _dense(*a, **k)
        return layer.with_backward(ZOO["dense"].mutant(layer))
    _dense = L.dense
    monkeypatch.setattr(L, "dense", buggy_dense)
    network, cfg = configure("mlp", batch=4, opt="sgd")
    net = certify_pieces(network, cfg)["network_backward"]
    assert net["status"] in ("REFUTED", "UNKNOWN")
    assert any(v != "PROVED" for v in net["wrt"].values()) and net["detail"]
