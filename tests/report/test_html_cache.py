"""``verigrad html`` reuses the certificate records of an earlier build by the same
verigrad source (and says so on the pages), certifies again with --no-cache, checks
--out before any work, and folds the shared subterms of a network's side conditions so
its page stays small."""
import json

from verigrad import cli


def _html(tmp_path, *extra):
    return cli.main(["html", "--out", str(tmp_path / "site"), "softmax.sums_to_one", "--layers", "dense",
                     "--networks", "cnn", *extra])


def test_html_reuses_stored_certificates_and_folds_conditions(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VERIGRAD_CACHE", str(tmp_path / "verify-cache"))
    assert _html(tmp_path) == 0
    first = capsys.readouterr()
    assert "certify 1/" in first.err and "stored records" not in first.err
    site = tmp_path / "site"
    records = json.loads((site / "certificates.json").read_text())
    cnn = next(r for r in records if r["name"] == "cnn")
    # the cnn's side conditions: dozens of kinks sharing its forward pass, each subterm written once
    assert cnn["status"] == "PROVED" and len(cnn["side_conditions"]) > 50 and cnn["where"]
    assert sum(map(len, cnn["side_conditions"])) + sum(map(len, cnn["where"])) < 100_000
    assert all(p.stat().st_size < 2_000_000 for p in site.rglob("*.html"))
    page = (site / "certificates" / "network-cnn.html").read_text()
    assert "stored record" not in page and "#1 = " in page

    assert _html(tmp_path) == 0                      # again: the stored records, no certification
    second = capsys.readouterr()
    assert "stored records" in second.err and "certify 1/" not in second.err
    again = json.loads((site / "certificates.json").read_text())
    assert [r["status"] for r in again] == [r["status"] for r in records]
    assert "a stored record" in (site / "certificates" / "network-cnn.html").read_text()
    # the index, where the statuses are counted, says they are recorded ones (helper-18)
    assert "stored records of an earlier build" in (site / "certificates.html").read_text()

    assert _html(tmp_path, "--no-cache") == 0       # certified again
    third = capsys.readouterr()
    assert "certify 1/" in third.err and "stored records" not in third.err
    assert "a stored record" not in (site / "certificates" / "network-cnn.html").read_text()
    assert "stored records of an earlier build" not in (site / "certificates.html").read_text()


def test_html_checks_out_before_any_work(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    assert cli.main(["html", "--out", "afile/site", "--layers", "dense", "--networks", "cnn"]) == 3
    err = capsys.readouterr().err
    assert "afile" in err and "certify" not in err and "verify 1/" not in err
