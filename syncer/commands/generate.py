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
from syncer.console import report_console
from syncer.cookbook.edit import describe as describe_edit
from syncer.cookbook.jsmodule import read_text
from syncer.errors import SyncError
from syncer.inferencex.releases import check_date
from syncer.inferencex.srtconfigs import OPTION_HELP as SRT_CONFIGS_HELP
from syncer.inputs import Input, read
from syncer.lint.publish import generate_checkout, print_generated
from syncer.syncconfig import is_date, load_sync_config
from syncer.templating import render
from syncer.untrusted import term_text
from syncer.usecases.generate import HistoryRenderer, generate_model, write_results
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
    renderer = HistoryRenderer(config.pins(), srt_repo=srt_repo, as_of=as_of, srt_files=srt)
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
        read(Input.SYNC_YAML, config_path),
        read(Input.INFERENCEX, inferencex),
        read(Input.COOKBOOK, out_dir),
    ]
    click.echo(render("read.txt.j2", read=reads), nl=False)
    for key, release in renderer.applied.items():
        # A branch is what the runner cloned: which of its commits these cells follow.
        click.echo(f"{term_text(key)}: rules of {term_text(release.describe())}")
    drift = False
    for result in results:
        if result.unpublished:
            click.echo(
                f"{term_text(result.path)}: no module published yet, so nothing to update or "
                f"check; `sync generate {term_text(result.model)}` without --update writes it"
            )
            continue
        verb = ("would change" if check else "written") if result.changed else "unchanged"
        click.echo(
            f"{term_text(result.path)}: {verb} "
            f"({count(result.cells, 'cell')}, {count(result.cases, 'case')} decoded back identical)"
        )
        if result.edit is not None and not result.edit.touched:
            click.echo(
                f"{term_text(result.path)}: every config's pin is the one the module records, "
                "so no config was rendered and nothing is edited"
            )
        elif result.edit is not None:
            click.echo(f"{term_text(result.path)}: edited in place: {describe_edit(result.edit)}")
        for kept in result.kept:
            click.echo(
                f"{term_text(result.path)}: kept {count(len(kept.cells), 'cell')} of "
                f"{term_text(kept.key)} as they were, without re-deriving them: launched by a "
                f"bash script ({term_text(kept.script)}); check them against a run with "
                f"`sync verify {term_text(kept.key)} --run RUN` "
                f"({', '.join(term_text(c) for c in kept.cells)})"
            )
        if check and result.changed:
            # The gate says what drifted, not only that something did: the reviewer diff of the
            # commands (what `sync diff` shows) between the module on disk and the generated one.
            _print_review(result.path, result.text)
        if result.page_path is not None and result.page_kept is not None:
            click.echo(
                f"{term_text(result.page_path)}: AgentX section under heading "
                f"{term_text(js(result.page_kept))} kept as its authors wrote it (it mounts the "
                "module)"
            )
        elif result.page_path is not None:
            pverb = ("would change" if check else "updated") if result.page_changed else "unchanged"
            click.echo(f"{term_text(result.page_path)}: AgentX section {pverb}")
        drift = drift or (check and (result.changed or result.page_changed))
    # Shown, never gating: the reviewer decides about flags the pinned SGLang lacks.
    print_generated([(str(r.path), r.text) for r in results if not r.unpublished], checkout)
    return 1 if drift else 0


def _print_review(path: Path, new_text: str) -> None:
    # Only a module that would change has a review: rich and jinja2 come with it.
    from syncer.compare.review import review_texts
    from syncer.compare.review_render import review_report

    old_text = read_text(path) if path.is_file() else None
    review = review_texts(old_text, new_text, old_label=str(path), new_label="generated")
    review_report(review).text(report_console())


def _check_date(text: str) -> None:
    """``--date`` becomes the module's ``generatedOn``: a real calendar date, YYYY-MM-DD."""
    if not is_date(text):
        raise SyncError(f"--date {js(text)}: expected a date as YYYY-MM-DD")
