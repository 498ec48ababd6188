"""Certifying the 4-block ViT for every batch size, as a whole process:
``verigrad render vit --no-tie`` (the network's backward by construction from its
layers' certificates, and the loss's; then the emission of the train step).

Goals (issue 13, 2-core machine): at most 14 s in all, the certification (network and
loss, as the manifest records their seconds) at most 10 s. Reference, measured in the
same rounds (alternating): ``verigrad render vit --no-tie --no-certify``, the start-up
and the emission alone. Each run is a fresh process; median of ``--runs``.

    .venv/bin/python benchmarks/render_vit.py [--runs N] [--net vit]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_TOTAL, GOAL_CERTIFY = 14.0, 10.0


def run(net: str, certify: bool) -> tuple[float, float | None, str]:
    """``(wall seconds, certification seconds or None, status)`` of one render process."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "verigrad.cli", "render", net, "--no-tie", "--out", f"{tmp}/out", "--json"]
        if not certify:
            cmd.append("--no-certify")
        env = dict(os.environ)
        env.pop("VERIGRAD_WITNESS", None)
        t0 = time.perf_counter()
        out = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
        if out.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed (exit {out.returncode}):\n{out.stdout}\n{out.stderr}")
        certs = json.loads(Path(f"{tmp}/out/manifest.json").read_text())["certificates"]
    if not certify:
        return wall, None, "not certified"
    parts = [certs["network_backward"], certs["loss_backward"]]
    status = "PROVED" if all(p["status"] == "PROVED" for p in parts) else \
        "/".join(p["status"] for p in parts)
    return wall, sum(float(p.get("seconds", 0.0)) for p in parts), status


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--net", default="vit")
    args = ap.parse_args(argv)
    full, cert, ref, status = [], [], [], set()
    for r in range(args.runs):
        for certify in ((True, False) if r % 2 == 0 else (False, True)):
            wall, seconds, st = run(args.net, certify)
            if certify:
                full.append(wall)
                cert.append(seconds)
                status.add(st)
            else:
                ref.append(wall)
    from rich.console import Console
    from rich.table import Table
    med_full, med_cert, med_ref = statistics.median(full), statistics.median(cert), statistics.median(ref)
    table = Table(title=f"verigrad render {args.net} --no-tie: median of {args.runs} fresh processes (alternating "
                        f"with --no-certify)")
    for col in ("what", "median s", "goal s", "status"):
        table.add_column(col, justify="left" if col in ("what", "status") else "right")

    def row(what, t, goal, st=""):
        style = "" if goal is None else ("green" if t <= goal else "red")
        table.add_row(what, f"[{style}]{t:.2f}" if style else f"{t:.2f}", "" if goal is None else f"<= {goal:.0f}", st)
    row(f"verigrad render {args.net} --no-tie, whole process", med_full, GOAL_TOTAL, "/".join(sorted(status)))
    row("  of which certification (network + loss)", med_cert, GOAL_CERTIFY)
    row(f"reference: verigrad render {args.net} --no-tie --no-certify", med_ref, None)
    Console(width=max(Console().width, 110)).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
