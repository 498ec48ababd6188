"""Attention: rows of softmax(Q K^T / sqrt d) V, masks, caches, relative positions."""
