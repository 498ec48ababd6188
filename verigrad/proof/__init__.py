"""The proof language (untrusted front end): theorem files with ``apply`` and ``prove``
in the style of ``Eq << step``; every step is re-checked by the kernel."""
