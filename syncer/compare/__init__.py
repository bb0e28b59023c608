"""Comparisons: normalised block diffs, verify reports, reviewer diffs of modules."""
