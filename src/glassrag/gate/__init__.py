"""The gate that declines, and its calibration.

The names of the scores a calibration can choose are here, and its rules are in rules.py, not
beside the code that computes with numpy, so that `glassrag calibrate --help` lists them without
importing it (tests/test_startup.py)."""

SCORES = ("combined", "auto")
