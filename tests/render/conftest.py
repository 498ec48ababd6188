"""Rendered steps shared by the tests (session scope: each is lowered and tied once)."""
import pytest

from verigrad.render import render

from render_nets import TINY_VIT


@pytest.fixture(scope="session")
def mlp_dir(tmp_path_factory):
    """The MLP, batch 8, AdamW, rendered and tied."""
    return render("mlp", tmp_path_factory.mktemp("mlp"), batch=8, opt="adamw")


@pytest.fixture(scope="session")
def square_mlp_dir(tmp_path_factory):
    """An MLP whose first weight is square (64 x 64): transposing it keeps the types."""
    return render("mlp", tmp_path_factory.mktemp("square"), batch=8, opt="sgd", options={"hidden": [64]})


@pytest.fixture(scope="session")
def vit_dir(tmp_path_factory):
    """A tiny ViT with its drop-path sites, Nesterov momentum, gradient clipping."""
    return render("vit", tmp_path_factory.mktemp("vit"), batch=4, opt="momentum", drop_path=0.1, clip=1.0,
                  options=TINY_VIT)
