"""One site per test session: the whole theorem library (checked, cached) and a few
certificates (three layers, every composition rule, the MLP). Certifying every layer and
network takes minutes; the pages do not need them all."""
import pytest

LAYERS = ["dense", "relu", "layer_norm"]
NETWORKS = ["mlp"]


@pytest.fixture(scope="session")
def theorem_records():
    from verigrad.proof import verify_library
    return verify_library(jobs=2)


@pytest.fixture(scope="session")
def certificate_records():
    from verigrad.nn import report
    return report.layer_records(LAYERS) + report.rule_records() + report.network_records(NETWORKS)


@pytest.fixture(scope="session")
def site(tmp_path_factory, theorem_records, certificate_records):
    from verigrad.report.site import write_site
    return write_site(tmp_path_factory.mktemp("site"), theorem_records, certificate_records)
