"""Reviewer diffs of data modules: cells matched across two texts, what changed, and its
report."""
