"""`sync reencode MODULE`: an existing module of any version decoded completely and written
again in the newest format, refused when a single decoded case would differ."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from syncer.encoder.encode import reencode_file
from syncer.untrusted import term_text
from syncer.wording import count


@click.command("reencode")
@click.argument("module", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    help="Write here (default: the module text on stdout).",
)
def reencode_command(module: Path, out: Path | None) -> int:
    """Re-encode a data module (any version) in the newest format, proven case by case."""
    text, cases = reencode_file(module, out)
    size = len(text.encode("utf-8"))
    original = module.stat().st_size
    summary = (
        f"{term_text(module)}: {count(cases, 'case')} decoded back identical; "
        f"{original} -> {size} bytes ({size / original:.3f})"
    )
    if out is None:
        sys.stdout.write(text)
        click.echo(summary, err=True)
    else:
        click.echo(f"{summary}; written to {term_text(out)}")
    return 0
