"""verigrad: verified deep learning in Python.

State facts about tensors and prove them with a small trusted kernel
(``verigrad.kernel``); certify that a backward pass is exactly the transpose-Jacobian
of its forward for every tensor size; compose certified layers into networks; train on
exactly the certified graph.
"""
__version__ = "0.1.0"
