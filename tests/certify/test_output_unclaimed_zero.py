"""``--output k``: the claim is the VJP with the cotangents of the other outputs held at 0
(the counterexample search draws them so). A backward that reads another output's
cotangent (t5x's cross-entropy reads ``g[0]`` only, its second output being "for
logging") is claimed about with it zero: its cotangent of an argument the claimed output
does not depend on is 0 = J^T dy, PROVED (it stayed a free variable, and the claim was
UNKNOWN); what the claimed output does depend on is still checked, and a backward that
ignores the claimed output's cotangent is REFUTED."""
import jax
import jax.numpy as jnp

import verigrad


def _two(x, t):
    return jnp.sum(x * t, -1), jnp.sum(x * x, -1)       # output 1 does not depend on t


def _bwd_first_only(res, g):        # reads g[0] only: right for output 0, wrong for output 1 in x
    x, t = res
    return g[0][:, None] * t, g[0][:, None] * x


def _bwd_right(res, g):
    x, t = res
    return g[0][:, None] * t + 2 * g[1][:, None] * x, g[0][:, None] * x


def _bwd_t_wrong(res, g):           # t's cotangent reads g[1]: wrong for output 1
    x, t = res
    return g[0][:, None] * t + 2 * g[1][:, None] * x, (g[0] + g[1])[:, None] * x


def _f(bwd):
    f = jax.custom_vjp(_two)
    f.defvjp(lambda x, t: (_two(x, t), (x, t)), bwd)
    return f


SHAPES = {"x": "n, k", "t": "n, k"}


def test_the_other_outputs_cotangent_is_zero():
    cert = verigrad.certify(_f(_bwd_first_only), SHAPES, output=1)
    assert cert.wrt["t"].status == "PROVED", cert.wrt["t"].detail       # g[0] = 0: 0 = d out1 / dt
    assert cert.wrt["x"].status == "REFUTED"                            # ignores g[1]
    assert cert.status == "REFUTED"
    assert verigrad.certify(_f(_bwd_first_only), SHAPES, output=0).status == "PROVED"


def test_a_claim_about_the_claimed_output_is_still_checked():
    assert verigrad.certify(_f(_bwd_right), SHAPES, output=1).status == "PROVED"
    assert verigrad.certify(_f(_bwd_right), SHAPES).status == "PROVED"
    cert = verigrad.certify(_f(_bwd_t_wrong), SHAPES, output=1)
    assert cert.wrt["t"].status == "REFUTED", cert.wrt["t"].detail
    assert verigrad.certify(_f(_bwd_t_wrong), SHAPES).status == "REFUTED"
    assert verigrad.certify(_f(_bwd_t_wrong), SHAPES, output=0).status == "PROVED"
