"""Use cases: a command's whole job, above the layers it draws on.

A use case finds its inputs (``sync.yaml``, pinned runs, modules: :mod:`syncer.locations`),
reads them with the source readers, compares with :mod:`syncer.compare` and returns a result;
the CLI commands and the bot call it.
"""
