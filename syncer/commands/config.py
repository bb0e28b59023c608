"""`sync config check` and `sync config schema`: a ``sync.yaml`` checked the way every command
reads it (each error on its own line of the file), its config keys and KV donors looked up in
an InferenceX checkout's master configs; and the JSON schema of the file, for editors
(``syncer/data/sync.schema.json``, held to the parser's vocabulary by the tests)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from syncer import locations
from syncer.commands import options
from syncer.errors import SyncError
from syncer.inputs import Input, record
from syncer.templating import render
from syncer.usecases.config_check import check_config

SCHEMA = Path(__file__).resolve().parent.parent / "data" / "sync.schema.json"


@click.group("config")
def config_command() -> None:
    """Check a sync.yaml, or print its JSON schema."""


@config_command.command("check")
@options.config_option()
@options.inferencex_option(
    help="InferenceX checkout whose master configs should hold every key named (default: the "
    "project's bundled example, for the project's own sync.yaml only)."
)
def check_command(config_path: Path, inferencex: Path | None) -> int:
    """Check a sync.yaml: its shape, and every config key and KV donor in the master configs.

    Exit code: 0 every key found, 1 keys in no master config (each on its line), 2 bad input."""
    if inferencex is None:
        own = locations.sync_config_path(locations.project_root())
        if config_path.resolve() != own.resolve():
            raise SyncError(
                "a sync.yaml of your own is checked against your InferenceX checkout: "
                "pass --inferencex PATH",
                path=str(config_path),
            )
        inferencex = locations.bundled_inferencex()
    result = check_config(config_path, inferencex)
    reads = [record(Input.SYNC_YAML, config_path), record(Input.INFERENCEX, inferencex)]
    sys.stdout.write(render("config_check.txt.j2", result=result, read=reads, path=config_path))
    return result.exit_code


@config_command.command("schema")
def schema_command() -> None:
    """Print the JSON schema of sync.yaml (for an editor's YAML language server)."""
    sys.stdout.write(SCHEMA.read_text(encoding="utf-8"))
