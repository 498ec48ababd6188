"""Backward passes: vector-Jacobian products of layers, losses and their compositions,
each the exact transpose-Jacobian of its forward (``vjp(f, x, dy)``) for every size."""
