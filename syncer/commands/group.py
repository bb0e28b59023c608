"""The click group of `sync`: every command by name, each imported only when invoked, so a
``sync decode`` pays for esprima and not for PyGithub (start-up time is part of the decode
benchmark). ``syncer.cli.main`` runs it; ``syncer/data/help.txt`` is its ``--help`` text
(``syncer.helptext``)."""

from __future__ import annotations

import importlib
import sys

import click

from syncer.errors import ReaderGone

# name -> (module, one-line help shown by `sync --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "adopt": ("syncer.commands.adopt", "Write the sync.yaml that reproduces a cookbook's AgentX."),
    "decode": ("syncer.commands.decode", "Decode a cookbook data module into commands."),
    "render": ("syncer.commands.render", "Render a config's launch commands from its recipe."),
    "verify": ("syncer.commands.verify", "Three-way check: cookbook vs recipe vs run logs."),
    "generate": ("syncer.commands.generate", "Generate cookbook data modules and page sections."),
    "reencode": ("syncer.commands.reencode", "Re-encode a module in the newest format."),
    "diff": ("syncer.commands.diff", "Reviewer diff of the commands in two module versions."),
    "lint": ("syncer.commands.lint", "Check flags against the SGLang version each image pins."),
    "audit": ("syncer.commands.audit", "Audit every published cookbook cell against InferenceX."),
    "config": ("syncer.commands.config", "Check a sync.yaml, or print its JSON schema."),
    "list": ("syncer.commands.list", "List an InferenceX checkout's AgentX configs and models."),
    "bot": ("syncer.commands.bot", "Handle a GitHub event: /use pins, cookbook PRs, status."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        module = importlib.import_module(entry[0])
        command: click.Command = getattr(module, f"{name}_command")
        return command

    def invoke(self, ctx: click.Context) -> object:
        # click turns a closed stdout into exit 1, the drift code: the pipe error leaves here
        # as an exception click does not catch, and the output is flushed here (not at exit)
        # so a reader that left before the last buffer is seen the same way.
        try:
            code = super().invoke(ctx)
            sys.stdout.flush()
        except BrokenPipeError:
            raise ReaderGone from None
        return code

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


EXIT_CODES = (
    "Exit codes: 0 clean or nothing changed; 1 drift or changes; 2 bad input (one error: "
    "line); 3 an internal error (a bug: its traceback is printed); 141 the reader of the "
    "output went away; 143 stopped by SIGTERM, nothing left half-written."
)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXIT_CODES,
)
@click.version_option(package_name="infx-cookbook-sync")
def cli() -> None:
    """Keep the SGLang cookbook's AgentX launch explorer true to InferenceX."""
