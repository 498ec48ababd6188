"""``verigrad certify PATH.py:NAME --shape ARG=DIMS ... [--json] [--timeout S]``

Proves a ``jax.custom_vjp`` correct for every size, or shows where it is wrong. The
contract (scripts depend on it): a short report, then as the last line exactly one word,
PROVED, REFUTED or UNKNOWN, with exit code 0, 1 or 2; bad input is exit code 3 with a
one-line error. ``--json`` prints one JSON object instead of the report.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

NAME = "certify"
HELP = "prove a jax.custom_vjp's backward exact for every size, or refute it with a counterexample"
EXIT = {"PROVED": 0, "REFUTED": 1, "UNKNOWN": 2}


def add_arguments(p):
    p.add_argument("target", metavar="PATH.py:NAME", help="a module-level jax.custom_vjp function (with defvjp)")
    p.add_argument("--shape", action="append", default=[], metavar="ARG=DIMS",
                   help="one per positional argument, in order: comma-separated dims, each a symbol (n), "
                        "an integer (8) or an expression (n+1, 2*n); ARG= for a scalar; "
                        "append :int32 or :bool for integer or boolean arguments (no cotangent)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="give up (UNKNOWN) after S seconds")
    p.add_argument("--proof", metavar="FILE", help="write the proof trace of what is PROVED to FILE "
                   "(replay with `verigrad check FILE`)")


def load_function(target: str):
    """The object ``NAME`` of the module at ``PATH`` (``PATH.py:NAME``)."""
    from verigrad.cli import UsageError
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"{target!r}: expected PATH.py:NAME")
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{path}: no such file")
    if file.suffix != ".py":
        raise UsageError(f"{path}: not a Python file")
    if not name.isidentifier():
        raise UsageError(f"{name!r} is not a Python name")
    mod_name = f"verigrad_certify_target_{abs(hash(str(file.resolve())))}"
    spec = importlib.util.spec_from_file_location(mod_name, file)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise UsageError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed to import
        raise UsageError(f"{path}: importing it failed: {type(e).__name__}: {e}") from None
    finally:
        sys.path.remove(str(file.resolve().parent))
    if not hasattr(module, name):
        raise UsageError(f"{path} has no module-level name {name!r}")
    return getattr(module, name)


def run(args) -> int:
    from verigrad.cli import UsageError
    from .obligations import BadInput, is_custom_vjp, positional_parameters
    from .specs import parse_option
    from verigrad.frontends.jaxpr import JaxprImportError

    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    fn = load_function(args.target)
    if not is_custom_vjp(fn):
        raise UsageError(f"{args.target} is not a jax.custom_vjp function (decorate it with @jax.custom_vjp)")
    if getattr(fn, "fwd", None) is None or getattr(fn, "bwd", None) is None:
        raise UsageError(f"{args.target} is a custom_vjp without rules: call {fn.__name__}.defvjp(fwd, bwd)")
    nondiff = tuple(getattr(fn, "nondiff_argnums", ()) or ())
    try:
        params = positional_parameters(fn.fun)
        specs = [parse_option(s) for s in args.shape]
    except JaxprImportError as e:
        raise UsageError(str(e)) from None
    if len(specs) != len(params):
        raise UsageError(f"{fn.__name__} takes {len(params)} positional argument{'s' * (len(params) != 1)} "
                         f"({', '.join(params)}); got {len(specs)} --shape option{'s' * (len(specs) != 1)}")
    for k, (s, p) in enumerate(zip(specs, params)):
        if s.name != p:
            raise UsageError(f"--shape {s}: argument {k + 1} of {fn.__name__} is {p!r}, not {s.name!r} "
                             "(give one --shape per positional argument, in order)")
    if nondiff:
        names = ", ".join(params[i] for i in nondiff if i < len(params))
        raise UsageError(f"{fn.__name__} has nondiff_argnums ({names}), which take Python values: certify it "
                         f"from Python with verigrad.certify({fn.__name__}, shapes={{..., {names.split(',')[0]!r}: value}})")
    from .api import certify
    try:
        cert = _with_progress(lambda progress: certify(fn, {s.name: s for s in specs}, timeout=args.timeout,
                                                        progress=progress), quiet=args.json)
    except (BadInput, JaxprImportError) as e:
        raise UsageError(str(e)) from None
    if args.proof:
        write_proof(args.proof, cert)
    if args.json:
        print(json.dumps(cert.as_dict()))
    else:
        from .report import print_report
        print_report(cert, args.target)
        print(cert.status, flush=True)
    return EXIT[cert.status]


def write_proof(path, cert):
    """The trace of every proved claim of ``cert`` (nothing is written for a refuted one)."""
    from verigrad.cli import UsageError
    from verigrad.trace import write_trace
    claims = [(f"{cert.name}: " + (c.name if c.name.startswith("forward") else f"d{c.name} = J^T dy"), c.theorem)
              for c in cert.claims() if c.status == "PROVED" and c.theorem is not None]
    try:
        write_trace(path, claims)
    except OSError as e:
        raise UsageError(f"cannot write the proof trace to {path}: {e.strerror or e}") from None


def _with_progress(work, quiet: bool):
    """Run ``work(progress)`` with a transient spinner on stderr (when it is a terminal)."""
    from rich.console import Console
    console = Console(stderr=True)
    if quiet or not console.is_terminal:
        return work(None)
    with console.status("certifying ...") as status:
        return work(lambda what: status.update(f"{what} ..."))
