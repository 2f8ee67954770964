"""suite: a cross-accelerator benchmark for deep-learning training."""

__version__ = "0.1.0"
