"""The Python API a JAX user expects: one base class for verigrad's exceptions, and
``shapes=`` as a string, a tuple of sizes or symbols, or a ``jax.ShapeDtypeStruct``."""
import importlib

import jax
import jax.numpy as jnp
import pytest
from jax import export

import verigrad
from verigrad.certify.specs import SpecError, split_shapes, to_spec
from verigrad.frontends.jaxpr import ArgSpec
from verigrad.kernel import SizeSym

# (module, class): every exception verigrad raises on purpose
PUBLIC = [
    ("verigrad.errors", "UsageError"), ("verigrad.errors", "CommandLineError"),
    ("verigrad.frontends.jaxpr", "JaxprImportError"),
    ("verigrad.frontends.stablehlo_types", "StableHLOError"), ("verigrad.proof.errors", "ProofError"),
    ("verigrad.certify.obligations", "BadInput"),          # a JaxprImportError
    ("verigrad.certify.specs", "SpecError"),
    ("verigrad.certify.evaluate", "EvalError"),
    ("verigrad.nn.compose", "CompositionError"), ("verigrad.nn.builder", "NetworkError"),
    ("verigrad.render", "TieFailed"), ("verigrad.render.tie", "NotTied"),
    ("verigrad.run.manifest", "ManifestError"), ("verigrad.run.checkpoint", "CheckpointError"),
    ("verigrad.run.backend", "ArgumentError"), ("verigrad.run.backend", "BackendUnavailable"),
    ("verigrad.run.train", "Diverged"), ("verigrad.run.dataset", "DataError"),
    ("verigrad.run.params_io", "ParamsError"), ("verigrad.run.distributed", "PlacementError"),
    ("verigrad.kernel.sizes", "KernelError"), ("verigrad.trace.replay", "TraceError"),
]
# Defined in modules other engineers own; each becomes a subclass with a one-line change there.


def _cls(module, name):
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("module, name", PUBLIC, ids=[n for _, n in PUBLIC])
def test_every_public_exception_is_a_verigrad_error(module, name):
    cls = _cls(module, name)
    assert issubclass(cls, verigrad.VerigradError), cls.__mro__
    assert cls.__name__ == name                     # names kept


def test_the_old_bases_are_kept():
    assert issubclass(_cls("verigrad.run.manifest", "ManifestError"), ValueError)
    assert issubclass(_cls("verigrad.render.tie", "NotTied"), RuntimeError)
    assert issubclass(SpecError, _cls("verigrad.frontends.jaxpr", "JaxprImportError"))


def test_verigrad_error_is_one_class_everywhere():
    from verigrad import errors
    from verigrad.kernel import sizes
    assert verigrad.VerigradError is errors.VerigradError is sizes.VerigradError
    assert issubclass(verigrad.UsageError, verigrad.VerigradError)
    assert not issubclass(verigrad.VerigradError, (ValueError, RuntimeError))


# -- shapes ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("given, dims, dtype", [
    ("n, d", ("n", "d"), "float"),
    ("n+1,2*n:int32", ("n+1", "2*n"), "int32"),
    ("", (), "float"),
    (("n", 8), ("n", "8"), "float"),
    ((SizeSym("n"), "d"), ("n", "d"), "float"),
    ((), (), "float"),
    (jax.ShapeDtypeStruct((3, 4), jnp.float32), ("3", "4"), "float32"),
    (jax.ShapeDtypeStruct(export.symbolic_shape("n, d + 1"), jnp.int32), ("n", "d+1"), "int32"),
    (export.symbolic_shape("b, 2*k"), ("b", "2*k"), "float"),
    (ArgSpec("other", ("n",), "bool"), ("n",), "bool"),
])
def test_a_shape_in_any_of_its_forms(given, dims, dtype):
    spec = to_spec("x", given)
    assert (spec.name, tuple(spec.dims), spec.dtype) == ("x", dims, dtype)


@pytest.mark.parametrize("given, says", [
    ("-1,d", "-1"), ("0", "dimension 0"), ("2-3", "2-3"), ("n/2", "n/2"), ("n:float16", "float16"),
    ((0, "n"), "dimension 0"), ((-2,), "dimension -2"),
    (jax.ShapeDtypeStruct((3,), jnp.complex64), "complex64"),
])
def test_a_bad_shape_names_the_argument(given, says):
    with pytest.raises(SpecError, match="argument x") as e:
        to_spec("x", given)
    assert says in str(e.value)
    assert isinstance(e.value, verigrad.VerigradError)


def test_a_symbolic_dimension_is_checked_against_its_lower_bound():
    with pytest.raises(SpecError, match="n-5"):
        to_spec("x", "n-5, d", minimum={})
    assert to_spec("x", "n-5", minimum={"n": 6}).dims == ("n-5",)


def test_other_values_are_held():
    specs, held = split_shapes({"x": "n, d", "eps": 1e-5, "causal": True, "axes": (0.5, 1.5)})
    assert set(specs) == {"x"} and held == {"eps": 1e-5, "causal": True, "axes": (0.5, 1.5)}
    with pytest.raises(SpecError, match="dict"):
        split_shapes(["n, d"])


@jax.custom_vjp
def _scale(x, w):
    return x * w


_scale.defvjp(lambda x, w: (_scale(x, w), (x, w)), lambda r, dy: (dy * r[1], jnp.sum(dy * r[0], axis=0)))


@pytest.mark.parametrize("shapes", [
    {"x": "n, d", "w": "d"},
    {"x": ("n", "d"), "w": ("d",)},
    {"x": jax.ShapeDtypeStruct(export.symbolic_shape("n, d"), jnp.float32),
     "w": jax.ShapeDtypeStruct(export.symbolic_shape("d"), jnp.float32)},
], ids=["strings", "tuples", "structs"])
def test_certify_reads_every_form(shapes):
    cert = verigrad.certify(_scale, shapes)
    assert cert.status == "PROVED", cert.detail
    assert set(cert.wrt) == {"x", "w"}


def test_certified_marks_without_certifying():
    @verigrad.certified(x="n")
    @jax.custom_vjp
    def f(x):
        return x

    f.defvjp(lambda x: (f(x), None), lambda _, dy: (dy,))
    assert f.__verigrad_shapes__ == {"x": "n"} and callable(f)
