"""`sync generate MODEL|--all`.

``generate`` renders the configs a model shows (``sync.yaml``), encodes the data module, proves
it by decoding it back, and writes the module and the page section only when they change;
``--check`` writes nothing, prints the reviewer diff of each module that would change (what
``sync diff`` shows) and exits 1 when anything would change (a CI drift gate).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from syncer import locations
from syncer.commands import options
from syncer.cookbook.jsmodule import read_text
from syncer.errors import SyncError
from syncer.inferencex.releases import check_date
from syncer.inferencex.renders import Renders
from syncer.inferencex.srtconfigs import OPTION_HELP as SRT_CONFIGS_HELP
from syncer.inputs import Input, record
from syncer.lint.hooks import generate_checkout, lint_published, print_generated
from syncer.syncconfig import is_date, load_sync_config
from syncer.usecases.generate import generate_model, write_results
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
    if today is not None:
        _check_date(today)
    if as_of is not None:
        check_date(as_of, what="--as-of")
    config = load_sync_config(config_path)
    names = [m.path for m in config.models] if all_models else [config.model(model or "").path]
    if only is not None:
        owner = config.model_of(only)
        if owner is None or owner.path not in names:
            raise SyncError(f"--only {only}: not a config of {', '.join(names)} in sync.yaml")
        names = [owner.path]
    srt = None
    if srt_slurm_configs is not None:
        from syncer.inferencex.srtconfigs import discover

        srt = discover(inferencex, srt_slurm_configs)
    # A branch is read at --as-of, else at its config's pinned run date, else at the
    # checkout's commit date (the precedence of syncer.inferencex.renders).
    pin_dates = {key: pin.date for key, pin in config.pins().items() if pin.date}
    renderer = Renders(srt_repo=srt_repo, as_of=as_of, srt_files=srt, pin_dates=pin_dates)
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
    conflicts = [r.page_conflict for r in results if r.page_conflict]
    if conflicts:
        # A hand-edited page section stops the whole run: writing the module without its page
        # (the old exit 1) left the two out of step, and said so without an `error:`.
        more = f" (and {count(len(conflicts) - 1, 'other page')})" if len(conflicts) > 1 else ""
        raise SyncError(f"{conflicts[0]}{more}; nothing was written")
    if not check:
        # Every file of every model in one step: written all, or (a page or module that cannot
        # be written, a full disk) none, so a failure never leaves the first model updated alone.
        write_results(results)
    reads = [
        record(Input.SYNC_YAML, config_path),
        record(Input.INFERENCEX, inferencex),
        record(Input.COOKBOOK, out_dir),
    ]
    # The gate says what drifted, not only that something did: the reviewer diff of the
    # commands (what `sync diff` shows) between the module on disk and the generated one.
    reviews = {r.path: _review(r.path, r.text) for r in results if check and r.changed}
    run = GenerateRun(results, check, reads, renderer.applied(), reviews)
    modules = [(str(r.path), r.text) for r in results if not r.unpublished]
    if fmt == "json":
        # Shown, never gating: the reviewer decides about flags the pinned SGLang lacks.
        run.lint = lint_published(modules, checkout) if checkout is not None else None
        return options.print_report(generate_report(run), fmt)
    code = options.print_report(generate_report(run), fmt)
    print_generated(modules, checkout)
    return code


def _review(path: Path, new_text: str) -> Any:
    # Only a module that would change has a review: rich and jinja2 come with it.
    from syncer.review.review import review_texts

    old_text = read_text(path) if path.is_file() else None
    return review_texts(old_text, new_text, old_label=str(path), new_label="generated")


def _check_date(text: str) -> None:
    """``--date`` becomes the module's ``generatedOn``: a real calendar date, YYYY-MM-DD."""
    if not is_date(text):
        raise SyncError(f"--date {js(text)}: expected a date as YYYY-MM-DD")
