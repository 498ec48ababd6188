"""The certificates of the pieces a train step is made of, for its manifest (untrusted
reporting; the theorems come from the kernel through ``verigrad.nn``).

``network_backward``: the rendered network, certified by construction from its layers'
certificates. A network rendered by name is certified at a symbolic batch size ``B``
(the same builder and options, so the statement covers the rendered batch and every
other); a ``Network`` object is certified as it is, at its own sizes.
``loss_backward``: softmax cross-entropy with label smoothing, at all sizes.
"""
from __future__ import annotations

import dataclasses
import time


def certify_pieces(network, cfg, progress=None) -> dict:
    """``{"network_backward": entry, "loss_backward": entry}`` for the manifest;
    ``progress(what, done, total)`` is called before and after each piece."""
    import jax
    from verigrad.nn import compose
    from verigrad.nn.report import from_theorems, layer_records
    from .step import build_network

    if progress:
        progress("certify the pieces", 0, 2)
    t0 = time.perf_counter()
    if cfg.source is not None:
        # A network file: the certificate its model made, the one each Custom piece of the
        # rendered network was checked against (``Model._same_customs``). A network built
        # again at a fresh symbolic batch runs the file's functions again, and the manifest
        # then stated a certificate of another network than the one checked and trained
        # (red team RT4-B5).
        from verigrad.nn.builder import load_source
        cert = load_source(cfg.source, check_hash=True).certify()
    else:
        if cfg.options is not None:             # by name: rebuild at a symbolic batch
            (batch,) = jax.export.symbolic_shape("B")
            network = build_network(dataclasses.replace(cfg, batch=batch))
        cert = compose.certify(network.layer)
    net = from_theorems("network", cfg.net, cert.theorems, time.perf_counter() - t0, cert.unshown)
    if progress:
        progress("certify the pieces", 1, 2)
    (loss,) = layer_records(["softmax_xent"])
    if progress:
        progress("certify the pieces", 2, 2)
    return {"network_backward": _entry(net, "by construction from the layers' certificates (verigrad.nn.compose)"),
            "loss_backward": {**_entry(loss, "softmax cross-entropy with label smoothing, mean over the batch"),
                              "layer": "softmax_xent", "statement": loss.statement}}


def _entry(record, how: str) -> dict:
    return {"status": record.status, "how": how, "wrt": record.wrt, "axioms": record.axioms,
            "side_conditions": record.side_conditions, "where": record.where, "sizes": record.sizes, "seconds": round(record.seconds, 3),
            **({"detail": record.detail} if record.detail else {})}
