"""Softmax, log-softmax, log-sum-exp and the cross-entropy loss."""
