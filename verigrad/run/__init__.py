"""Execution (untrusted): compiling checked StableHLO with XLA (PJRT) or IREE, the
training loop, datasets and checkpoints; your data (``dataset``), the trained
parameters out (``params_io``), predictions from the tied forward (``predict``), the
devices and processes a run uses (``distributed``), and training from Python
(``api.fit``, ``api.predict``)."""
