"""Train-step assembly and StableHLO emission (untrusted): one module per step; the
render tie re-imports the emitted text and has the kernel check it against the
certified math, so neither this printer nor JAX's lowering is trusted."""
