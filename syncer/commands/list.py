"""`sync list`: the SGLang AgentX configs of an InferenceX checkout (the keys the cookbook can
show), each with how InferenceX launches it (``recipe`` or ``script``), single or multi node,
agg or disagg, its hardware, and the cookbook model of ``sync.yaml`` that takes it, or why
none does. ``--format json`` prints ``{"configs": [...], "read": [...]}``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from syncer.commands import options
from syncer.inferencex.master import load_master
from syncer.inputs import Input, record
from syncer.locations import bundled_inferencex
from syncer.syncconfig import load_sync_config
from syncer.templating import render
from syncer.untrusted import json_text
from syncer.usecases.listing import agentx_configs


@click.command("list")
@options.inferencex_option()
@options.config_option()
@options.format_option(
    ["text", "json"], help="text: one line per config, then the counts; json: the same as data."
)
def list_command(inferencex: Path | None, config_path: Path, fmt: str) -> None:
    """List the SGLang AgentX configs of an InferenceX checkout and the model taking each."""
    if inferencex is None:
        inferencex = bundled_inferencex()
    config = load_sync_config(config_path)
    configs = agentx_configs(load_master(inferencex), config)
    reads = [record(Input.SYNC_YAML, config_path), record(Input.INFERENCEX, inferencex)]
    if fmt == "json":
        doc = {"configs": [c.as_json() for c in configs], "read": [r.as_json() for r in reads]}
        sys.stdout.write(json_text(doc, indent=1) + "\n")
        return
    sys.stdout.write(render("list.txt.j2", configs=configs, read=reads))
