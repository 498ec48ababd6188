"""Rendered steps shared by the tests (each is lowered and tied once per test run, and
read by every xdist worker: ``made_once`` in ``tests/conftest.py``)."""
import pytest

from verigrad.render import render

from render_nets import TINY_VIT


@pytest.fixture(scope="session")
def mlp_dir(made_once):
    """The MLP, batch 8, AdamW, rendered and tied."""
    return made_once("mlp", lambda d: render("mlp", d, batch=8, opt="adamw"))


@pytest.fixture(scope="session")
def square_mlp_dir(made_once):
    """An MLP whose first weight is square (64 x 64): transposing it keeps the types."""
    return made_once("square", lambda d: render("mlp", d, batch=8, opt="sgd", options={"hidden": [64]}))


@pytest.fixture(scope="session")
def vit_dir(made_once):
    """A tiny ViT with its drop-path sites, Nesterov momentum, gradient clipping."""
    return made_once("vit", lambda d: render("vit", d, batch=4, opt="momentum", drop_path=0.1, clip=1.0,
                                             options=TINY_VIT))
