"""Sizes shared by the render tests (a module of its own: ``conftest`` names clash
across test folders)."""

TINY_VIT = {"width": 16, "heads": 2, "depth": 2, "hidden": 32}   # the tie's cost barely depends on sizes
