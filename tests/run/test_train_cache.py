"""``verigrad train NET`` trains what ``verigrad render NET`` rendered: both use the cache
folder of the configuration (``verigrad.render.cache``), so the second command renders
nothing; the exact bytes are tied again before training. A folder named like the net in
the working directory does not stand in for the net."""
import json
from pathlib import Path

from verigrad import cli
from verigrad.render import cache


def _json_line(out: str) -> dict:
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def test_train_reuses_the_rendered_folder_of_its_configuration(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mlp").mkdir()                                  # a folder named like the net
    (tmp_path / "mlp" / "notes.txt").write_text("mine")
    assert cli.main(["render", "mlp", "--json"]) == 0
    rendered = Path(_json_line(capsys.readouterr().out)["directory"])
    assert rendered.parent == Path(".verigrad-cache") and rendered.name.startswith("mlp-")
    assert rendered == cache.directory("mlp", batch=64, opt="adamw", drop_path=0.1)
    manifest = rendered / "manifest.json"
    stamp = manifest.stat().st_mtime_ns, manifest.read_bytes()

    assert cli.main(["train", "mlp", "--epochs", "1", "--json"]) == 0
    summary = _json_line(capsys.readouterr().out)
    assert Path(summary["params"]).parent == rendered and summary["render_tie"] == "CHECKED"
    assert (manifest.stat().st_mtime_ns, manifest.read_bytes()) == stamp      # not rendered again
    assert sorted(p.name for p in (tmp_path / "mlp").iterdir()) == ["notes.txt"]

    assert cli.main(["train", "mlp", "--epochs", "1", "--batch", "32", "--json"]) == 0
    other = Path(_json_line(capsys.readouterr().out)["params"]).parent
    assert other != rendered and json.loads((other / "manifest.json").read_text())["batch"] == 32


def test_a_damaged_cached_render_is_rendered_again(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    folder = cache.directory("mlp", batch=16, opt="sgd", drop_path=0.1)
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text("{truncated")
    assert cli.main(["train", "mlp", "--epochs", "1", "--batch", "16", "--opt", "sgd", "--json"]) == 0
    assert json.loads((folder / "manifest.json").read_text())["batch"] == 16


def test_the_cache_key_follows_every_option():
    base = dict(batch=64, opt="adamw", drop_path=0.1)
    keys = {cache.directory("mlp", **base), cache.directory("cnn", **base),
            cache.directory("mlp", **dict(base, batch=32)), cache.directory("mlp", **dict(base, opt="sgd")),
            cache.directory("mlp", **dict(base, drop_path=0.0)), cache.directory("mlp", clip=1.0, **base),
            cache.directory("mlp", label_smoothing=0.0, **base), cache.directory("mlp", hyper={"weight_decay": 0.1},
                                                                                 **base),
            cache.directory("mlp", certify=False, **base), cache.directory("mlp", tie=False, **base)}
    assert len(keys) == 10
    assert cache.directory("mlp", **base) == cache.directory("mlp", **base)
