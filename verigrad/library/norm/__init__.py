"""Normalization layers: layer norm, RMS norm, batch norm."""
