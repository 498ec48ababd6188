"""Activation functions: sigmoid, softplus, SiLU, GELU, ReLU, tanh."""
