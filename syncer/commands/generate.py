"""`sync generate MODEL|--all`.

``generate`` renders the configs a model shows (``sync.yaml``), encodes the data module, proves
it by decoding it back, and writes the module and the page section only when they change;
``--check`` writes nothing, prints the reviewer diff of each module that would change (what
``sync diff`` shows) and exits 1 when anything would change (a CI drift gate).
"""

from __future__ import annotations

from pathlib import Path

import click

from syncer import locations
from syncer.commands import options
from syncer.errors import SyncError
from syncer.inferencex.releases import check_date
from syncer.inferencex.renders import Renders
from syncer.inferencex.srtconfigs import OPTION_HELP as SRT_CONFIGS_HELP
from syncer.inferencex.srtconfigs import discover
from syncer.inputs import Input, record
from syncer.lint.hooks import generate_checkout, lint_published
from syncer.syncconfig import SyncConfig, is_date, load_sync_config
from syncer.usecases.generate import GenerateResult, generate_model, write_results
from syncer.usecases.generate_report import GenerateRun, generate_report
from syncer.wording import count, js


@click.command("generate")
@click.argument("model", required=False)
@click.option("--all", "all_models", is_flag=True, help="Every model in the sync configuration.")
@options.config_option()
@options.inferencex_option(locations.EXAMPLE_INFERENCEX, help="InferenceX checkout.")
@options.cookbook_dir_option(
    "--out", "out_dir", help="Directory of the data modules (<org>/<model>.jsx)."
)
@options.folder_option(
    "--pages",
    "pages_dir",
    default=locations.EXAMPLE_PAGES,
    help="Cookbook checkout holding the model pages (sync.yaml 'page' paths).",
)
@click.option("--no-page", is_flag=True, help="Leave the model pages alone.")
@click.option("--force-page", is_flag=True, help="Overwrite a hand-edited AgentX section.")
@options.date_option("generatedOn (default: today, UTC).")
@click.option(
    "--update",
    is_flag=True,
    help="Edit the existing module: write again only the configs whose pin differs from what "
    "it records (or that it lacks); every other byte stays as published. A model with no "
    "module yet is left alone (said so).",
)
@click.option(
    "--only",
    metavar="CONFIG",
    help="Re-render only this config; keep the module's other cells as decoded.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; print the reviewer diff of each module that would change; "
    "exit 1 if any output would change.",
)
@options.sglang_option("SGLang checkout for the flag check (default: --pages, when it is one).")
@options.format_option(
    ["text", "json"],
    help="text: a line per module and page, the reviewer diff of each that would change "
    "(--check), the flag check; json: the same as data (the flag check only in text).",
)
@options.srt_slurm_configs_option(SRT_CONFIGS_HELP)
@options.srt_slurm_history_options
def generate_command(
    model: str | None,
    all_models: bool,
    config_path: Path,
    inferencex: Path,
    out_dir: Path,
    pages_dir: Path,
    no_page: bool,
    force_page: bool,
    today: str | None,
    update: bool,
    only: str | None,
    check: bool,
    sglang: Path | None,
    srt_slurm_configs: Path | None,
    srt_repo: Path | None,
    as_of: str | None,
    fmt: str,
) -> int:
    """Generate cookbook AgentX data modules and page sections from InferenceX."""
    checkout = generate_checkout(sglang, None if no_page else pages_dir)
    if bool(model) == all_models:
        raise SyncError("give a MODEL (org/model path or display name) or --all")
    _check_dates(today, as_of)
    config = load_sync_config(config_path)
    names = _models(config, model, only)
    renderer = _renders(config, inferencex, srt_slurm_configs, srt_repo, as_of)
    # Every model is generated and proven before anything is written: a bad config of the
    # second model must not leave the first one updated alone.
    results = [
        generate_model(
            name,
            config=config,
            inferencex=inferencex,
            out_dir=out_dir,
            check=True,
            pages_dir=None if no_page else pages_dir,
            today=today,
            force_page=force_page,
            only=only,
            update=update,
            renderer=renderer,
        )
        for name in names
    ]
    _refuse_page_conflicts(results)
    if not check:
        # Every file of every model in one step: written all, or (a page or module that cannot
        # be written, a full disk) none, so a failure never leaves the first model updated alone.
        write_results(results)
    reads = [
        record(Input.SYNC_YAML, config_path),
        record(Input.INFERENCEX, inferencex),
        record(Input.COOKBOOK, out_dir),
    ]
    modules = [(str(r.path), r.text) for r in results if not r.unpublished]
    # Shown, never gating: the reviewer decides about flags the pinned SGLang lacks.
    lint = lint_published(modules, checkout) if checkout is not None else None
    run = GenerateRun(results, check, reads, renderer.applied(), lint=lint)
    return options.print_report(generate_report(run), fmt)


def _check_dates(today: str | None, as_of: str | None) -> None:
    """``--date`` becomes the module's ``generatedOn``: a real calendar date, YYYY-MM-DD;
    ``--as-of`` is a date a branch is read at."""
    if today is not None and not is_date(today):
        raise SyncError(f"--date {js(today)}: expected a date as YYYY-MM-DD")
    if as_of is not None:
        check_date(as_of, what="--as-of")


def _renders(
    config: SyncConfig,
    inferencex: Path,
    srt_slurm_configs: Path | None,
    srt_repo: Path | None,
    as_of: str | None,
) -> Renders:
    """The renderings of this run: a branch is read at --as-of, else at its config's pinned
    run date, else at the checkout's commit date (the precedence of
    syncer.inferencex.renders)."""
    srt = discover(inferencex, srt_slurm_configs) if srt_slurm_configs is not None else None
    pin_dates = {key: pin.date for key, pin in config.pins().items() if pin.date}
    return Renders(srt_repo=srt_repo, as_of=as_of, srt_files=srt, pin_dates=pin_dates)


def _models(config: SyncConfig, model: str | None, only: str | None) -> list[str]:
    """The models to generate: ``model``'s (else every one), or the one ``--only`` names a
    config of, which must be among them."""
    names = [config.model(model).path] if model else [m.path for m in config.models]
    if only is None:
        return names
    owner = config.model_of(only)
    if owner is None or owner.path not in names:
        raise SyncError(f"--only {only}: not a config of {', '.join(names)} in sync.yaml")
    return [owner.path]


def _refuse_page_conflicts(results: list[GenerateResult]) -> None:
    """A hand-edited page section stops the whole run: writing the module without its page
    (the old exit 1) left the two out of step, and said so without an `error:`."""
    conflicts = [r.page_conflict for r in results if r.page_conflict]
    if conflicts:
        more = f" (and {count(len(conflicts) - 1, 'other page')})" if len(conflicts) > 1 else ""
        raise SyncError(f"{conflicts[0]}{more}; nothing was written")
