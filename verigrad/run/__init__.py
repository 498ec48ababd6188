"""Execution (untrusted): compiling checked StableHLO with XLA (PJRT) or IREE, the
training loop, datasets and checkpoints."""
