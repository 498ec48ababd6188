"""Red team RT23 (2026-12-05, a helper against the render tie; fixed): three edits of a
rendered step that XLA runs otherwise than the importer read them, tied CHECKED, and
trained uphill (test accuracy 0.09 against 0.91).

- F1: ``add`` of i1 constants: the spec (and the importer) say logical or, XLA's constant
  folder adds the bits (true + true = false). Now add (and subtract) of booleans is refused.
- F2, F3: a constant predicate under a select with an infinite branch was decided in
  float64: ``[2^53 + 1 > 2^53]`` in i64 is one float64; ``[0.1 + 0.2 - 0.3 > 0]`` is true in
  float64, false exactly and in float32. Now a compared quantity must be clear of 0 by far
  more than the rounding of the values it is computed from.
"""
import pytest

from verigrad.frontends.stablehlo import StableHLOError, import_module


def _main(body, result="%r : tensor<f32>"):
    return ("func.func public @main(%x: tensor<f32>) -> tensor<f32> {\n"
            + "".join(f"  {line}\n" for line in body) + f"  return {result}\n}}")


def test_an_add_of_booleans_is_refused():
    text = _main(["%t = stablehlo.constant dense<true> : tensor<i1>",
                  "%s = stablehlo.add %t, %t : tensor<i1>",
                  "%f = stablehlo.convert %s : (tensor<i1>) -> tensor<f32>",
                  "%r = stablehlo.multiply %x, %f : tensor<f32>"])
    with pytest.raises(StableHLOError, match="add of booleans"):
        import_module(text)


def _select_under(pred_lines):
    return _main(pred_lines + ["%inf = stablehlo.constant dense<0x7F800000> : tensor<f32>",
                               "%s = stablehlo.select %p, %inf, %x : tensor<i1>, tensor<f32>",
                               "%one = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
                               "%r = stablehlo.minimum %s, %one : tensor<f32>"])


@pytest.mark.parametrize("pred", [
    ["%a = stablehlo.constant dense<9007199254740993> : tensor<i64>",
     "%b = stablehlo.constant dense<9007199254740992> : tensor<i64>",
     "%p = stablehlo.compare GT, %a, %b : (tensor<i64>, tensor<i64>) -> tensor<i1>"],
    ["%a = stablehlo.constant dense<1.000000e-01> : tensor<f32>",
     "%b = stablehlo.constant dense<2.000000e-01> : tensor<f32>",
     "%c = stablehlo.constant dense<3.000000e-01> : tensor<f32>",
     "%ab = stablehlo.add %a, %b : tensor<f32>",
     "%u = stablehlo.subtract %ab, %c : tensor<f32>",
     "%z = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
     "%p = stablehlo.compare GT, %u, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>"],
], ids=["i64 past 2^53", "0.1 + 0.2 - 0.3"])
def test_a_constant_predicate_rounding_decides_is_refused(pred):
    with pytest.raises(StableHLOError, match="constant predicate whose compared quantity is too close"):
        import_module(_select_under(pred))


def test_a_clear_constant_predicate_is_still_decided():
    import_module(_select_under(["%a = stablehlo.constant dense<2.000000e+00> : tensor<f32>",
                                 "%z = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
                                 "%p = stablehlo.compare GT, %a, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>"]))
