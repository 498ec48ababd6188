"""Matrix identities: transposes, traces, products, block matrices, special matrices."""
