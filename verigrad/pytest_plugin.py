"""pytest plugin: a project's own test suite asserts that its custom VJPs are PROVED.

Installed with verigrad (the ``pytest11`` entry point ``verigrad``), it adds

- a test per function marked with ``@verigrad.certified(x="n, d", ...)`` that a test
  module defines or imports, named ``NAME[certified]``, failing unless the function's
  backward is PROVED for every size (the failure shows the report: the counterexample of
  a REFUTED one, the reason of an UNKNOWN one);
- the ``verigrad`` fixture, for tests that certify with their own shapes or options::

      def test_rms_norm_vjp(verigrad):
          cert = verigrad.assert_proved(rms_norm, x="n, d")
          assert "x" in cert.wrt

      def test_wrong_twin_is_refuted(verigrad):
          verigrad.assert_refuted(rms_norm_wrong, x="n, d")

All of it shares the test process: JAX is imported once, and a function certified with
the same shapes twice is certified once per session. ``-p no:verigrad`` turns the plugin
off. Importing this module imports neither JAX nor the kernel; that happens at the first
certification.
"""
from __future__ import annotations

import inspect

import pytest

_SESSION_CACHE: dict = {}


class Certifier:
    """What the ``verigrad`` fixture gives a test."""

    def __init__(self, cache: dict):
        self._cache = cache

    def certify(self, fn, shapes: dict | None = None, /, **shape_kw):
        """The certificate of ``fn`` at ``shapes`` (a dict, keywords, or the shapes it was
        marked with by ``@verigrad.certified``); the same function and shapes are
        certified once per session."""
        import verigrad
        shapes = _shapes_of(fn, shapes, shape_kw)
        key = (id(fn), repr(sorted(shapes.items(), key=lambda kv: kv[0])))
        hit = self._cache.get(key)
        if hit is None or hit[0] is not fn:
            hit = self._cache[key] = (fn, verigrad.certify(fn, shapes))
        return hit[1]

    def assert_proved(self, fn, shapes: dict | None = None, /, **shape_kw):
        """The certificate, or an ``AssertionError`` showing why ``fn`` is not PROVED."""
        cert = self.certify(fn, shapes, **shape_kw)
        if cert.status != "PROVED":
            raise AssertionError(report(cert, _name(fn)))
        return cert

    def assert_refuted(self, fn, shapes: dict | None = None, /, **shape_kw):
        """The certificate, or an ``AssertionError`` unless a counterexample refutes ``fn``."""
        cert = self.certify(fn, shapes, **shape_kw)
        if cert.status != "REFUTED":
            raise AssertionError(f"{_name(fn)} is {cert.status}, not REFUTED\n" + report(cert, _name(fn)))
        return cert


def _name(fn) -> str:
    return getattr(fn, "__name__", None) or getattr(getattr(fn, "fun", None), "__name__", None) or repr(fn)


def _shapes_of(fn, shapes, shape_kw) -> dict:
    if shapes is not None and shape_kw:
        raise TypeError("give the shapes as a dict or as keywords, not both")
    out = dict(shapes) if shapes is not None else dict(shape_kw)
    if not out:
        out = dict(getattr(fn, "__verigrad_shapes__", None) or {})
    if not out:
        raise TypeError(f"no shapes for {_name(fn)}: pass them (x='n, d') or mark it with @verigrad.certified(...)")
    return out


def report(cert, name: str) -> str:
    """The certify report as plain text (for an assertion message)."""
    import io

    from rich.console import Console

    from verigrad.certify.report import print_report
    buf = io.StringIO()
    print_report(cert, name, Console(file=buf, width=100, highlight=False, soft_wrap=True, color_system=None))
    return buf.getvalue().rstrip() + f"\n{cert.status}"


@pytest.fixture(scope="session")
def _verigrad_cache():
    return _SESSION_CACHE


@pytest.fixture
def verigrad(_verigrad_cache):
    """Certify custom VJPs in this process: ``verigrad.assert_proved(fn, x="n, d")``."""
    return Certifier(_verigrad_cache)


class CertifiedItem(pytest.Item):
    """The test of one ``@verigrad.certified`` function: PROVED, or it fails."""

    def __init__(self, *, fn, **kw):
        super().__init__(**kw)
        self.fn = fn

    def runtest(self):
        Certifier(_SESSION_CACHE).assert_proved(self.fn)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, AssertionError):
            return f"{_name(self.fn)} is not PROVED:\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        target = getattr(self.fn, "fun", None) or self.fn
        try:
            path, line = inspect.getsourcefile(target), inspect.getsourcelines(target)[1]
        except (OSError, TypeError):
            path, line = self.path, 0
        return path, line, f"{self.name}: @verigrad.certified{getattr(self.fn, '__verigrad_shapes__', {})}"


def pytest_pycollect_makeitem(collector, name, obj):
    """A marked function in a test module's namespace becomes a ``CertifiedItem``."""
    if inspect.isclass(obj) or not isinstance(collector, pytest.Module):
        return None
    try:
        shapes = getattr(obj, "__verigrad_shapes__", None)
    except Exception:  # noqa: BLE001 - an object that answers getattr strangely is not ours
        return None
    if not isinstance(shapes, dict):
        return None
    return CertifiedItem.from_parent(collector, name=f"{name}[certified]", fn=obj)


def pytest_configure(config):
    config.addinivalue_line("markers", "verigrad: tests that certify custom VJPs with verigrad")
