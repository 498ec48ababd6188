import os

# Keep JAX on the CPU in tests.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
