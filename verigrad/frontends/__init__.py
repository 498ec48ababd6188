"""Front ends (untrusted): ways into the kernel's terms.

``ops`` builds tensor operations (matmul, softmax, layer norm, ...) as kernel terms;
the jaxpr and StableHLO importers translate JAX functions and emitted module text.
A front end can build a wrong term; translation validation and the kernel's checks
are what stand between such a bug and a wrong certificate.
"""
