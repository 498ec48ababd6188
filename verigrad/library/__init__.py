"""The theorem library (untrusted input, kernel-checked): one statement per file,
organized by area, each with ``apply`` (the statement) and ``prove`` (its proof)."""
