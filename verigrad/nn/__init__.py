"""Certified layers, combinators and network specs (untrusted; each certificate is
made by the kernel). A layer is a forward and a backward written in JAX, with a
certificate for every input and every parameter."""
