"""`sync adopt --cookbook CHECKOUT --out FILE`: the sync.yaml that reproduces a cookbook's
AgentX modules and pages, whichever generator wrote them (see syncer.usecases.adopt and
docs/adopting.md)."""

from __future__ import annotations

from pathlib import Path

import click

from syncer.commands import options
from syncer.untrusted import term_text
from syncer.wording import count, js


@click.command("adopt")
@options.folder_option(
    "--cookbook",
    "checkout",
    required=True,
    exists=True,
    help="Cookbook checkout (SGLang's repository): docs/src/snippets/agentx/ and docs/cookbook/.",
)
@options.file_option(
    "--out", "out", required=True, help="Where to write the sync.yaml (replaced whole)."
)
def adopt_command(checkout: Path, out: Path) -> int:
    """Write the sync.yaml that reproduces a cookbook's AgentX modules and pages."""
    from syncer.fsio import write_atomic
    from syncer.inputs import head_commit, shown
    from syncer.usecases.adopt import adopt

    commit = head_commit(checkout)
    adoption = adopt(checkout, label=f"commit {commit}" if commit else None)
    write_atomic(out, adoption.text)
    where = f" at commit {commit}" if commit else ""
    click.echo(f"read cookbook checkout: {term_text(shown(checkout))}{where}")
    for model in adoption.models:
        click.echo(
            f"{term_text(model.path)}: {term_text(model.page)}, section "
            f"{term_text(js(model.section))}, {count(model.configs, 'config')}, "
            f"{count(model.cells, 'cell')}"
        )
    for note in adoption.notes:
        click.echo(f"note: {term_text(note)}")
    click.echo(f"wrote {term_text(shown(out))} ({count(len(adoption.models), 'model')})")
    return 0
