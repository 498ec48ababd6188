"""``verigrad certify PATH.py:NAME [options] [PATH.py:NAME [options] ...]``

Proves a ``jax.custom_vjp`` (or ``jax.custom_gradient``) correct for every size, or
shows where it is wrong. The contract (scripts depend on it): a short report per
target, then as the last line exactly one word, PROVED, REFUTED or UNKNOWN (the weakest
of the targets'), with exit code 0, 1 or 2; bad input is exit code 3 with a one-line
error and no traceback; a run stopped by ``--timeout`` is UNKNOWN (exit 2), and Ctrl-C
stops it within a second or two (exit 130). ``--json`` prints one JSON object instead of
the report.

Options after a target apply to it; before the first target, to every target. Several
targets share one process (JAX is imported and warmed up once).
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

NAME = "certify"
HELP = "prove a jax.custom_vjp's backward exact for every size, or refute it with a counterexample"
EXIT = {"PROVED": 0, "REFUTED": 1, "UNKNOWN": 2}

# per-target options: (flags, argparse keywords)
TARGET_OPTIONS = [
    (("--shape",), dict(action="append", default=None, metavar="ARG=DIMS",
                        help="the shape of an argument: comma-separated dims, each a symbol (n), an integer (8) or "
                             "an expression (n+1, 2*n); ARG= for a scalar; append :int32 or :bool for integer or "
                             "boolean arguments (no cotangent). One per argument without a default")),
    (("--static",), dict(action="append", default=None, metavar="ARG=VALUE",
                         help="hold an argument at a Python value (nondiff_argnums, flags, eps): a literal such as "
                              "1e-5, True, -1, (2, 3), 'causal'; arguments with defaults are held at them")),
    (("--output",), dict(action="append", type=int, default=None, metavar="K",
                         help="claim about output K only (repeatable); the others' cotangents are zero")),
    (("--wrt",), dict(action="append", default=None, metavar="ARG",
                      help="claim about ARG's cotangent only (repeatable)")),
    (("--min",), dict(action="append", default=None, metavar="SIZE=N",
                      help="a lower bound for a size symbol (default 1), e.g. --min k=2")),
    (("--assume",), dict(action="append", default=None, metavar="EXPR",
                         help="a precondition, stated on the certificate: 'sum(t, -1) == 1', 'x >= 0.5', "
                              "'any(mask, -1)'")),
    (("--stop-gradient",), dict(dest="stop_gradient", choices=("jax", "identity"), default=None,
                                help="jax (default): stop_gradient has derivative zero and inner custom_jvp/custom_vjp "
                                     "rules are honoured, as JAX differentiates the forward; identity: the value "
                                     "passes and inner custom rules read as their primal bodies (the mathematical "
                                     "reading)")),
    (("--mask-value-as-inf",), dict(dest="mask_value_as_inf", action="store_true", default=None,
                                    help="read a finite mask value (a constant <= -1e8) as -inf; stated as an "
                                         "assumption (fully masked rows are then not covered)")),
    (("--save-counterexample",), dict(dest="save_counterexample", default=None, metavar="FILE.npz",
                                      help="write a refutation's sizes, inputs, cotangents and values to FILE.npz")),
]
GLOBAL_OPTIONS = [
    (("--json",), dict(action="store_true", default=None, help="print one JSON object instead of the report")),
    (("--timeout",), dict(type=float, default=None, metavar="S",
                          help="give up (UNKNOWN) after S seconds in all, importing and tracing included")),
    (("--claim-timeout",), dict(dest="claim_timeout", type=float, default=None, metavar="S",
                                help="give up on one claim (UNKNOWN) after S seconds; the others go on")),
    (("--budget",), dict(type=int, default=None, metavar="N",
                         help="the kernel's work budget per decision, in monomial products (default 3000000)")),
    (("--max-memory",), dict(dest="max_memory", type=float, default=None, metavar="GIB",
                             help="give up on a claim (UNKNOWN) once the process holds more than GIB GiB "
                                  "(default: three quarters of the memory available at the start)")),
    (("--proof",), dict(default=None, metavar="FILE", help="write the proof trace of what is PROVED to FILE "
                                                           "(replay with `verigrad check FILE`)")),
]


_GLOBAL = ("json", "timeout", "claim_timeout", "budget", "max_memory", "proof")


def add_arguments(p):
    p.add_argument("targets", nargs=argparse.REMAINDER, metavar="PATH.py:NAME [OPTIONS] ...",
                   help="module-level jax.custom_vjp (or jax.custom_gradient) functions, each followed by its "
                        "options")
    for flags, kw in TARGET_OPTIONS + GLOBAL_OPTIONS:
        p.add_argument(*flags, **kw)
    p.epilog = ("Options given after a target apply to it; before the first target, to every target. "
                "Example: verigrad certify examples/certify/dense.py:dense --shape x=n,d --shape w=d,m --shape b=m")


class _Group(argparse.ArgumentParser):
    def error(self, message):          # an argument error: one line, exit 2
        from verigrad.errors import CommandLineError
        raise CommandLineError(message)


def _group_parser():
    g = _Group(prog="verigrad certify", add_help=False)
    for flags, kw in TARGET_OPTIONS + GLOBAL_OPTIONS:
        g.add_argument(*flags, **kw)
    return g


def _value_flags() -> set:
    out = set()
    for flags, kw in TARGET_OPTIONS + GLOBAL_OPTIONS:
        if kw.get("action") != "store_true":
            out.update(flags)
    return out


def split_targets(tokens: list) -> list:
    """``[(target, [option tokens])]`` from the tokens after the first target."""
    valued = _value_flags()
    groups, expect_value = [], False
    for tok in tokens:
        if expect_value:
            groups[-1][1].append(tok)
            expect_value = False
        elif tok.startswith("-") and len(tok) > 1 and not _is_number(tok):
            if not groups:
                groups.append((None, []))
            groups[-1][1].append(tok)
            expect_value = tok in valued
        else:
            groups.append((tok, []))
    return groups


def _is_number(tok: str) -> bool:
    try:
        float(tok)
        return True
    except ValueError:
        return False


def _merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for k, v in extra.items():
        if v is None:
            continue
        if isinstance(v, list):
            out[k] = list(out.get(k) or []) + v
        else:
            out[k] = v
    return out


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
    import zlib
    mod_name = f"verigrad_certify_target_{zlib.crc32(str(file.resolve()).encode())}"
    spec = importlib.util.spec_from_file_location(mod_name, file)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise UsageError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed to import
        raise UsageError(f"{path}: importing it failed: {type(e).__name__}: {_first(e)}") from None
    finally:
        try:
            sys.path.remove(str(file.resolve().parent))
        except ValueError:
            pass
    if not hasattr(module, name):
        raise UsageError(f"{path} has no module-level name {name!r}")
    return getattr(module, name)


def _first(e) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else ""


def _pairs(items, what: str, convert) -> dict:
    from verigrad.cli import UsageError
    out = {}
    for text in items or []:
        key, eq, val = text.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise UsageError(f"{what} {text!r}: expected NAME=VALUE")
        try:
            out[key] = convert(val.strip())
        except (ValueError, SyntaxError):
            raise UsageError(f"{what} {text!r}: {val.strip()!r} is not a valid value") from None
    return out


def _literal(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if text.isidentifier():
            return text          # a bare word: a string ('causal')
        raise


def _positive_int(text: str) -> int:
    v = int(text)
    if v < 1:
        raise ValueError(text)
    return v


def run(args) -> int:
    from verigrad.cli import UsageError
    tokens = list(args.targets or [])
    if not tokens:
        raise UsageError("expected PATH.py:NAME (a module-level jax.custom_vjp), then its --shape options")
    base = {k: getattr(args, k, None) for k in ("shape", "static", "output", "wrt", "min", "assume", "stop_gradient",
                                               "mask_value_as_inf", "save_counterexample", "json", "timeout",
                                               "claim_timeout", "budget", "max_memory", "proof")}
    groups = split_targets(tokens)
    if groups and groups[0][0] is None:
        raise UsageError(f"unexpected {groups[0][1][0]!r} before the first target")
    parser = _group_parser()
    targets, glob = [], {k: base[k] for k in _GLOBAL}
    for target, opts in groups:
        ns = vars(parser.parse_args(opts))
        for k in _GLOBAL:
            if ns.get(k) is not None:
                glob[k] = ns[k]
        targets.append((target, _merge({k: base[k] for k in base if k not in glob}, ns)))
    from verigrad.errors import CommandLineError
    for k in ("timeout", "claim_timeout", "max_memory"):
        if glob.get(k) is not None and not glob[k] > 0:
            raise CommandLineError(f"--{k.replace('_', '-')} must be positive, not {glob[k]:g}")
    if glob.get("budget") is not None and glob["budget"] < 1:
        raise CommandLineError("--budget must be positive")
    if glob.get("proof") and len(targets) > 1:
        raise UsageError("--proof writes one target's trace: give it with one target")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    hard = sys.argv[1:2] == ["certify"]          # the real command (not main() called in-process)
    from .clock import Timeout, Watchdog, deadline, process_age
    t0 = time.perf_counter() - (process_age() if hard else 0.0)     # a limit counts from the launch
    at = t0 + glob["timeout"] if glob.get("timeout") else None
    results: list = []
    quiet = bool(glob.get("json"))

    def final(code, why):
        """What the watchdog prints before ending a process that cannot be stopped."""
        done = {r["target"] for r in results}
        rest = [t for t, _ in targets if t not in done]
        if quiet:
            out = _json_payload(results + [_stub(t, "UNKNOWN", f"{why}") for t in rest])
            return json.dumps(out)
        lines = [f"{t}: UNKNOWN ({why})" for t in rest]
        return "\n".join(lines + (["UNKNOWN"] if code == 2 else []))

    watch = Watchdog(at, final=final) if hard else None
    try:
        if watch is not None:
            watch.__enter__()
        with deadline(at, "the run", glob.get("timeout")):
            for target, opts in targets:
                results.append(_one(target, opts, glob, at, quiet))
    except Timeout as e:
        done = {r["target"] for r in results}
        for t, _ in targets:
            if t not in done:
                results.append(_stub(t, "UNKNOWN", f"timed out (the limit of {e.limit:g} s for the run) while "
                                                   f"importing, tracing or certifying {t}"))
                if not quiet:
                    print(f"{t}: UNKNOWN: {results[-1]['detail']}", flush=True)
    except KeyboardInterrupt:
        if not hard:
            raise
        print("interrupted", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(130)      # at once: the libraries' teardown can take seconds
    finally:
        if watch is not None:
            watch.__exit__(None, None, None)
    status = _worst(r["status"] for r in results)
    if quiet:
        print(json.dumps(_json_payload(results)), flush=True)
    else:
        print(status, flush=True)
    if hard and at is not None:
        # everything is written: leave at once rather than wait for the libraries'
        # teardown (seconds for JAX's) when a time limit was asked for
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT[status])
    return EXIT[status]


def _worst(statuses) -> str:
    """The status of several targets: REFUTED if one is, PROVED if all are, else UNKNOWN."""
    found = set(statuses) or {"UNKNOWN"}
    if "REFUTED" in found:
        return "REFUTED"
    return "PROVED" if found == {"PROVED"} else "UNKNOWN"


def _stub(target, status, detail) -> dict:
    return {"target": target, "status": status, "detail": detail, "dict": {"status": status, "detail": detail}}


def _json_payload(results):
    if len(results) == 1:
        return dict(results[0]["dict"], target=results[0]["target"])
    return {"status": _worst(r["status"] for r in results),
            "targets": [dict(r["dict"], target=r["target"]) for r in results]}


def _one(target: str, opts: dict, glob: dict, at, quiet: bool) -> dict:
    """Certify one target; print its report (unless quiet); its result."""
    from verigrad.cli import UsageError
    from verigrad.frontends.jaxpr import JaxprImportError
    from .obligations import (BadInput, custom_gradient_function, is_custom_vjp, parameter_defaults,
                              positional_parameters)
    from .specs import Held, SpecError, parse_option
    fn = load_function(target)
    if not is_custom_vjp(fn):
        raise UsageError(f"{target} is not a jax.custom_vjp function (decorate it with @jax.custom_vjp, or "
                         "@jax.custom_gradient)")
    inner = custom_gradient_function(fn)
    if inner is None and (getattr(fn, "fwd", None) is None or getattr(fn, "bwd", None) is None):
        raise UsageError(f"{target} is a custom_vjp without rules: call {fn.__name__}.defvjp(fwd, bwd)")
    primal = inner if inner is not None else fn.fun
    nondiff = () if inner is not None else tuple(getattr(fn, "nondiff_argnums", ()) or ())
    statics = _pairs(opts.get("static"), "--static", _literal)
    minimum = _pairs(opts.get("min"), "--min", _positive_int)
    try:
        params = positional_parameters(primal)
        specs = [parse_option(s, minimum) for s in opts.get("shape") or []]
    except SpecError:
        raise                           # the command line itself: exit 2
    except JaxprImportError as e:
        raise UsageError(str(e)) from None
    defaults = parameter_defaults(primal)
    fname = getattr(primal, "__name__", "f")
    seen = set()
    for s in specs:
        if s.name not in params:
            raise UsageError(f"--shape {s}: {fname} has no positional argument {s.name!r} "
                             f"(its arguments: {', '.join(params)})")
        if s.name in seen:
            raise UsageError(f"--shape {s}: {s.name} is given two shapes")
        seen.add(s.name)
    for k in statics:
        if k not in params:
            raise UsageError(f"--static {k}=...: {fname} has no positional argument {k!r} "
                             f"(its arguments: {', '.join(params)})")
        if k in seen:
            raise UsageError(f"--static {k}=...: {k} is also given a shape")
    for i in nondiff:
        if i < len(params) and params[i] not in statics and params[i] not in defaults:
            raise UsageError(f"{fname} has nondiff_argnums ({params[i]}), which take Python values: "
                             f"give --static {params[i]}=VALUE")
    missing = [p for p in params if p not in seen and p not in statics and p not in defaults]
    if missing:
        raise UsageError(f"{fname} takes {len(params)} positional argument{'s' * (len(params) != 1)} "
                         f"({', '.join(params)}); no --shape (or --static) for {', '.join(missing)}")
    shapes = {s.name: s for s in specs}
    shapes.update({k: Held(v) for k, v in statics.items()})     # 'flash', (1, 2): values, not shapes
    from .api import DEFAULT_BUDGET, certify
    kw = dict(timeout=None, output=opts.get("output"), wrt=opts.get("wrt"), minimum=minimum,
              assume=opts.get("assume") or (), stop_gradient=opts.get("stop_gradient") or "jax",
              claim_timeout=glob.get("claim_timeout"), budget=glob.get("budget") or DEFAULT_BUDGET,
              mask_value_as_inf=bool(opts.get("mask_value_as_inf")), max_memory=glob.get("max_memory"))
    if at is not None:
        kw["timeout"] = max(at - time.perf_counter(), 1e-3)
    try:
        cert = _with_progress(lambda progress: certify(fn, shapes, progress=progress, **kw), quiet=quiet)
    except (BadInput, SpecError) as e:
        raise UsageError(str(e)) from None
    except JaxprImportError as e:
        if getattr(e, "bad_input", False):
            raise UsageError(str(e)) from None
        cert = _refused(fname, specs, e)
    if cert.status == "REFUTED" and opts.get("save_counterexample") and cert.counterexample is not None:
        try:
            cert.counterexample.save(opts["save_counterexample"])
        except OSError as e:
            raise UsageError(f"cannot write {opts['save_counterexample']}: {e.strerror or e}") from None
    if glob.get("proof"):
        write_proof(glob["proof"], cert)
    if not quiet:
        from .report import print_report
        print_report(cert, target)
    return {"target": target, "status": cert.status, "detail": cert.detail, "dict": cert.as_dict()}


def _refused(name, specs, e):
    """UNKNOWN: the importer refuses a primitive or a reading (exact or refuse)."""
    from .api import VjpCertificate
    from .certificate import Certificate
    wrt = {s.name: Certificate(s.name, "UNKNOWN", f"bwd(x, dy)[{s.name}] = J^T dy", detail=f"not imported: {e}")
           for s in specs if s.kind == "real"}
    return VjpCertificate(name, "UNKNOWN", f"custom backward of {name} = J^T dy for all sizes", wrt=wrt,
                          detail=f"not imported: {e}", sizes={s.name: ",".join(s.dims) for s in specs},
                          validation=f"not run: the import stopped: {e}")


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
