"""The theorem library (untrusted input, kernel-checked): one statement per file,
organized by area, each with ``apply`` (the statement) and ``prove`` (its proof).

Layout: ``verigrad/library/<area>/<what_it_proves>.py``, the theorem's name being
``area.what_it_proves``. Areas: ``softmax`` (softmax, log-softmax, cross-entropy),
``attention`` (rows, masks, the KV cache, relative positions), ``matrix`` (transposes,
traces, products, block and special matrices), ``norm`` (layer, RMS and batch norm),
``activations`` (sigmoid, softplus, SiLU, GELU, ReLU), ``vjp`` (backward passes).
The five seed-000 proofs are ``matrix.swap_bordered``, ``matrix.bordered_transpose``,
``attention.softmax_row_zero`` (and ``softmax_row_i``), ``attention.relative_position``
and ``matrix.delta_is_last_basis_vector``.

A theorem cites another by importing its module (``from verigrad.library.softmax import
sums_to_one``) and calling ``sums_to_one.apply(...)``; the import is also how
``verigrad verify`` finds what a theorem's cache key must cover. Check with
``verigrad verify [PATTERN]``; see ``verigrad.proof`` for the language.
"""
