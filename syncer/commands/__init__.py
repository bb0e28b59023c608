"""One module per CLI command; each exposes ``<name>_command`` (see ``syncer.cli``)."""
