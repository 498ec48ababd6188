"""A ``jax.custom_vjp`` from a forward and a backward, as the red-team tests write them:
``bwd(*primals, g)`` returns one cotangent per primal; the residuals are the primals."""
import jax


def custom_vjp(fwd, bwd):
    h = jax.custom_vjp(fwd)
    h.defvjp(lambda *a: (h(*a), a), lambda r, g: bwd(*r, g))
    return h
