"""Real-world finding 3 (notes/real-world.md): the importer modelled ``labels == iota`` as
a one-hot row summing to 1, an assumption it made by itself, so a cross-entropy backward
that is wrong for an ignore label (``-100``: a zero row, whose true gradient is 0) was
PROVED, the assumption listed among the side conditions. The model is now exact for every
label (a row's sum is a variable, 0 outside the range); the range is a precondition the
user states (``--assume "0 <= labels < v"``) and the certificate lists as given."""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad

SHAPES = {"x": "b, v", "labels": "b:int32"}


def _onehot(labels, v, dtype):
    return (labels[:, None] == jnp.arange(v)[None, :]).astype(dtype)


def _loss(x, labels):
    return -jnp.sum(_onehot(labels, x.shape[1], x.dtype) * jax.nn.log_softmax(x, axis=-1))


def _xent(valid_mask: bool):
    f = jax.custom_vjp(_loss)

    def bwd(res, g):
        x, labels = res
        d = jax.nn.softmax(x, axis=-1) - _onehot(labels, x.shape[1], x.dtype)
        if valid_mask:
            d = d * ((labels >= 0) & (labels < x.shape[1])).astype(x.dtype)[:, None]
        return g * d, None
    f.defvjp(lambda x, labels: (_loss(x, labels), (x, labels)), bwd)
    return f


def test_a_backward_wrong_for_ignore_labels_is_refuted_at_one():
    f = _xent(valid_mask=False)
    cert = verigrad.certify(f, SHAPES, wrt=["x"])
    assert cert.status == "REFUTED", cert.detail
    ce = cert.counterexample
    lab, v = np.asarray(ce.inputs["labels"]), ce.sizes["v"]
    assert np.any((lab < 0) | (lab >= v)), ce           # the counterexample is an ignore label
    with jax.enable_x64(True):                           # and JAX agrees it is one
        x = jnp.asarray(ce.inputs["x"])
        want = jax.grad(lambda x: _loss(x, jnp.asarray(lab)))(x)
        got = jax.vjp(f, x, jnp.asarray(lab))[1](jnp.asarray(1.0))[0]
    assert not np.allclose(want, got)
    assert not any("lies in" in c for c in cert.side_conditions)


def test_with_the_range_stated_it_is_proved_and_lists_it():
    cert = verigrad.certify(_xent(valid_mask=False), SHAPES, wrt=["x"], assume="0 <= labels < v")
    assert cert.status == "PROVED", cert.detail
    assert any("0 <= labels < v" in h for h in cert.hypotheses)


def test_a_range_wider_than_the_classes_is_not_read_as_one_hot_rows():
    """Labels in [0, v + 1) may name no class: the rows need not sum to 1."""
    cert = verigrad.certify(_xent(valid_mask=False), SHAPES, wrt=["x"], assume="0 <= labels < v + 1")
    assert cert.status == "REFUTED", cert.detail


def test_a_backward_that_masks_ignore_labels_is_never_refuted():
    """Right for every label: PROVED with the range, and without it never REFUTED (the
    model does not know that the mask and the row's sum are the same label's range)."""
    f = _xent(valid_mask=True)
    assert verigrad.certify(f, SHAPES, wrt=["x"]).status in ("PROVED", "UNKNOWN")
    assert verigrad.certify(f, SHAPES, wrt=["x"], assume="0 <= labels < v").status == "PROVED"
