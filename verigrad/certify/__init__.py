"""Certification (untrusted): VJP obligations, strategies, counterexamples, certificates.

It states what must hold (a backward equals the transpose-Jacobian of its forward),
asks the kernel to prove it, searches for a counterexample when it cannot, and
reports one of PROVED / CHECKED / TESTED / REFUTED / UNKNOWN. Only a kernel
``Theorem`` can make a PROVED certificate.
"""
