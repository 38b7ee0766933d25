"""Reading: the context budget and the extractive reader."""
