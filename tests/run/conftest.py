import pytest

from verigrad.run import manifest, reference


@pytest.fixture(scope="session")
def ref_dir(tmp_path_factory):
    """The plain-JAX reference MLP step (AdamW, one drop-path site), rendered once."""
    return reference.write(tmp_path_factory.mktemp("ref"), batch=64, hidden=32)


@pytest.fixture(scope="session")
def ref(ref_dir):
    return manifest.load(ref_dir)
