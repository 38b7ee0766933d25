"""The gate that declines, and its calibration.

The names a calibration can choose are here, not beside the code that computes with numpy, so
that `glassrag calibrate --help` lists them without importing it (tests/test_startup.py)."""

RULES = ("cost", "balanced", "keep95")
SCORES = ("combined", "auto")
