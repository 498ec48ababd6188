"""``verigrad html``: write the offline proof browser, a static site that works from
``file://``.

::

    verigrad html --out site                          # every theorem and certificate
    verigrad html --out site softmax 'vjp.*'          # some theorems (as verigrad verify)
    verigrad html --out site --no-certificates        # the library only (seconds)
    verigrad html --out site --layers dense,relu --networks mlp   # some certificates
    verigrad html --out site --certificates-from old/certificates.json   # precomputed

Theorems are checked as ``verigrad verify`` checks them (in parallel, cached).
Certifying every layer and network takes minutes (the ViT longest); each build saves
its records as ``certificates.json`` in the site, which ``--certificates-from`` reads
back. Exit code 0 when the site is written (whatever the statuses it shows), 3 for
bad input.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from verigrad.errors import UsageError

NAME = "html"
HELP = "write the offline HTML proof browser: theorems, proof steps, certificates, block diagrams"


def add_arguments(p):
    from verigrad.options import at_least
    p.add_argument("patterns", nargs="*", metavar="PATTERN",
                   help="theorems to include (area.name, area, glob); all if none")
    p.add_argument("--out", "-o", required=True, metavar="DIR", help="folder to write the site into")
    p.add_argument("--jobs", "-j", type=at_least(1), default=None, metavar="N",
                   help="worker processes for checking theorems")
    p.add_argument("--no-cache", action="store_true", help="check every theorem again and certify every layer and "
                   "network again (by default both come from the caches when verigrad's source is unchanged)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--no-certificates", action="store_true", help="leave the certificates page empty")
    src.add_argument("--certificates-from", metavar="FILE",
                     help="certificate records as JSON (a site's certificates.json) instead of certifying now")
    p.add_argument("--layers", metavar="NAMES", help="comma-separated zoo layers to certify (default: all)")
    p.add_argument("--networks", metavar="NAMES", help="comma-separated networks to certify (default: all)")
    p.add_argument("--json", action="store_true", help="print a JSON summary of what was written")


def run(args) -> int:
    from rich.console import Console
    from verigrad.options import output_folder
    out = Path(args.out)
    layers, networks = _names(args.layers, "layers"), _names(args.networks, "networks")
    preloaded = _read_certificates(Path(args.certificates_from)) if args.certificates_from else None
    infos = _theorems(args.patterns)
    output_folder(out, "--out")                     # before any work

    t0 = time.perf_counter()
    theorems = _check(infos, args)
    if args.no_certificates:
        certificates = []
    elif preloaded is not None:
        certificates = preloaded
    else:
        certificates = _certificates(layers, networks, quiet=args.json, use_cache=not args.no_cache)

    from .site import write_site
    _clear(out)
    site = write_site(out, theorems, certificates)
    summary = {"out": str(out.resolve()), "index": site.index.resolve().as_uri(), "files": len(site.pages),
               "theorems": _counts(r.status for r in theorems),
               "certificates": _counts(c["status"] if isinstance(c, dict) else c.status for c in certificates),
               "seconds": round(time.perf_counter() - t0, 3)}
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        Console().print(f"wrote {len(site.pages)} files to {out} ({len(theorems)} theorems, {len(certificates)} "
                        f"certificates) in {summary['seconds']:.1f} s; open {summary['index']}",
                        highlight=False, markup=False, soft_wrap=True)
    return 0


def _names(value, what):
    """``--layers a,b`` -> ``["a", "b"]``, each checked against what exists."""
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if what == "layers":
        from verigrad.nn.layers.zoo import ZOO as known
    else:
        from verigrad.nn.nets import NETS as known
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise UsageError(f"--{what}: no {what[:-1]} {', '.join(map(repr, bad)) or 'given'} "
                         f"(known: {', '.join(sorted(known))})")
    return names


def _theorems(patterns):
    from verigrad.proof.library import load_library, select
    infos = load_library()
    chosen = []
    for p in patterns:
        found = select(infos, [p])
        if not found:
            raise UsageError(f"no theorem matches {p!r} (areas: {', '.join(sorted({i.area for i in infos}))})")
        chosen += [i for i in found if i not in chosen]
    return chosen or infos


def _read_certificates(path: Path) -> list:
    """Certificate records from JSON, each checked for the fields the pages need."""
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise UsageError(f"--certificates-from {path}: cannot read it ({e.strerror or e})") from None
    except ValueError as e:
        raise UsageError(f"--certificates-from {path}: not JSON ({e})") from None
    if isinstance(data, dict) and isinstance(data.get("records"), list):
        data = data["records"]
    if not isinstance(data, list):
        raise UsageError(f"--certificates-from {path}: expected a list of certificate records")
    from verigrad.certify.certificate import STATUSES
    for k, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise UsageError(f"--certificates-from {path}: record {k} is not an object")
        missing = [f for f in ("kind", "name", "status") if f not in rec]
        if missing:
            raise UsageError(f"--certificates-from {path}: record {k} has no {', '.join(missing)}")
        if rec["status"] not in STATUSES:
            raise UsageError(f"--certificates-from {path}: record {k} ({rec['name']}) has status "
                             f"{rec['status']!r}, not one of {', '.join(STATUSES)}")
        if rec["kind"] not in ("layer", "rule", "network"):
            raise UsageError(f"--certificates-from {path}: record {k} ({rec['name']}) has kind {rec['kind']!r}, "
                             "not layer, rule or network")
    return data


def _check(infos, args):
    from verigrad.console import Progress
    from verigrad.proof.library import verify_library
    with Progress("verify", len(infos), quiet=args.json) as progress:
        return verify_library(infos=infos, jobs=args.jobs, use_cache=not args.no_cache,
                              on_result=lambda rec: progress.done(rec.name, rec.status))


def _certify(layers, networks, quiet: bool):
    from verigrad.console import Progress
    from verigrad.nn import nets, report, rules
    from verigrad.nn.layers.zoo import ZOO
    total = len(layers or ZOO) + len(rules.standard_rules()) + len(networks or nets.NETS)
    with Progress("certify", total, quiet=quiet) as progress:
        return (report.layer_records(layers, progress=progress.start) + report.rule_records(progress=progress.start)
                + report.network_records(networks, progress=progress.start))


def _certificates(layers, networks, quiet: bool, use_cache: bool) -> list:
    """The certificate records: certified now, or the stored records of an earlier
    build made by the same verigrad source with the same selection
    (``.verigrad-cache/html/``; ``--no-cache`` certifies again). Stored records are
    marked as such on their pages."""
    import hashlib
    from verigrad.render.cache import ROOT, code_fingerprint
    key = hashlib.sha256(json.dumps({"layers": layers, "networks": networks, "code": code_fingerprint()},
                                    sort_keys=True).encode()).hexdigest()[:16]
    stored = ROOT / "html" / f"certificates-{key}.json"
    if use_cache and stored.is_file():
        try:
            records = _read_certificates(stored)
            if not quiet:
                print(f"certificates: {len(records)} stored records of an earlier build by the same verigrad source "
                      f"({stored}; --no-cache certifies again)", file=sys.stderr)
            return [dict(r, stored=str(stored)) for r in records]
        except UsageError:
            pass                                        # damaged: certify again
    records = _certify(layers, networks, quiet)
    try:
        stored.parent.mkdir(parents=True, exist_ok=True)
        tmp = stored.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps([r.as_dict() if hasattr(r, "as_dict") else r for r in records]))
        tmp.replace(stored)
    except OSError:
        pass                                            # a cache only
    return records


def _clear(out: Path):
    """Pages of an earlier build of the site (not other files) go, so none is stale."""
    if not (out / "search-index.js").is_file():
        return
    for sub in ("theorems", "certificates"):
        if (out / sub).is_dir():
            shutil.rmtree(out / sub)


def _counts(statuses) -> dict:
    out: dict = {}
    for s in statuses:
        out[s] = out.get(s, 0) + 1
    return out

