"""The untrusted search for canonical binder orders (``verigrad.certify.canon``) must not
depend on the names the binders arrive with: alpha-equivalent sums get one order, so
the kernel sees them as one term. Its keys rename the binders and rebuild the factors
(a polynomial's monomials are sorted by keys that spell the names, so replacing the
names in a key string kept their old order)."""
from verigrad.kernel import IndexVar, SizeSym, Sum, Theorem, Var, prove_equal
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly

B = SizeSym("B")
dy = Var("dy", (B, Poly.const(17)))
x = Var("x", (B, Poly.const(8), Poly.const(8)))
i, j, k = IndexVar("i", B), IndexVar("j", Poly.const(4)), IndexVar("k", Poly.const(4))
I, J, K = Poly.sym(i), Poly.sym(j), Poly.sym(k)


def test_alpha_equivalent_sums_are_one_sum():
    """The shape of a strided convolution's weight cotangent (the ViT's patch embedding):
    dy read at 1 + j + 4k, x at (2k, 2j), summed over j, k < 4; the same sum with j and k
    swapped, and with the sums nested the other way."""
    body = T.Index(dy, (I, 1 + J + 4 * K)) * T.Index(x, (I, 2 * K, 2 * J))
    swapped = T.Index(dy, (I, 1 + 4 * J + K)) * T.Index(x, (I, 2 * J, 2 * K))
    a = Sum(i, Sum(j, Sum(k, body)))
    for b in (Sum(i, Sum(k, Sum(j, body))), Sum(i, Sum(j, Sum(k, swapped)))):
        assert isinstance(prove_equal(a, b), Theorem)
