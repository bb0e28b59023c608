"""Comparisons: normalised block diffs, the three-way verify and its report."""
