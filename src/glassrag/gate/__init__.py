"""The gate that declines, and its calibration."""
