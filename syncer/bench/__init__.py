"""Benchmarks: `python -m syncer.bench NAME [args]`. Each reports ratios against a reference run
made in the same process, so the figures travel between machines."""
