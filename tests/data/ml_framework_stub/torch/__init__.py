"""Test stand-in for torch: only what determined.tensorboard needs (see README.md)."""
__version__ = "2.0.0"
