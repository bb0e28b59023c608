"""`sync bot --event FILE [--dry-run]`: handle one GitHub event (see syncer.publish.bot).

Tokens come from the environment only: ``GITHUB_TOKEN`` (or ``INFX_TOKEN``) for the InferenceX
repository (comments, reactions, runs, artifacts) and ``COOKBOOK_TOKEN`` for the cookbook (PRs
and the push; a PAT or App token, so the cookbook's CI runs on the bot's PRs). Everything this
command prints, including errors and tracebacks, passes through the secret mask.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from syncer import links, secrets
from syncer.commands import options
from syncer.errors import SyncError
from syncer.locations import user_cache_dir
from syncer.syncconfig import SyncConfig, load_sync_config
from syncer.wording import js

if TYPE_CHECKING:
    from syncer.github.client import GitHubClient
    from syncer.github.event import Payload
    from syncer.github.plan import Plan
    from syncer.publish.bot_report import BotRun
    from syncer.publish.settings import Settings


@click.command("bot")
@options.file_option(
    "--event", "event_path", help="The event payload (GITHUB_EVENT_PATH). Required."
)
@click.option(
    "--event-name",
    default=lambda: os.environ.get("GITHUB_EVENT_NAME", ""),
    help="issue_comment, pull_request, schedule, repository_dispatch or workflow_dispatch "
    "(default: GITHUB_EVENT_NAME).",
)
@options.config_option("Sync configuration.")
@options.inferencex_option(
    Path("inferencex"), help="Checkout of the InferenceX PR (read as data, never executed)."
)
@click.option(
    "--cookbook",
    default=links.COOKBOOK_CLONE_URL,
    show_default=True,
    help="Cookbook checkout path or clone URL.",
)
@options.repo_option(
    "--cookbook-repo",
    default=links.COOKBOOK_REPO,
    help="The cookbook repository (owner/name) the bot opens its PRs in.",
)
@options.repo_option(
    "--inferencex-repo",
    default=links.INFERENCEX_REPO,
    help="The InferenceX repository (owner/name) whose PRs and comments the bot answers.",
)
@options.folder_option(
    "--inferencex-clone",
    help="The bot's InferenceX git clone (bare is fine; created when absent): PR heads and "
    "main are fetched into it, each PR's AgentX configs found from its commits and every "
    "config read at its own commit, as git objects (nothing checked out). Without it: "
    "the configs and pins sync.yaml lists, read from --inferencex.",
    exists=False,
)
@click.option(
    "--inferencex-remote",
    default=None,
    help="Where --inferencex-clone fetches from (default: the clone's origin when it has one, "
    "else https://github.com/<--inferencex-repo>.git).",
)
@options.folder_option(
    "--srt-slurm-clone",
    help="The bot's srt-slurm git clone (bare is fine; created when absent): with "
    "--inferencex-clone its branches are fetched once per event from the URL InferenceX main's "
    ".gitmodules gives srt-slurm, and a branch a runner cloned is rendered as it was at the "
    "config's commit date. Without it such a branch is judged at its head.",
    exists=False,
)
@click.option("--push-repo", default=None, help="Fork (owner/name) to push the bot branch to.")
@click.option("--push-url", default=None, help="Git URL of that fork.")
@options.folder_option(
    "--cache-dir",
    default=user_cache_dir,
    help="Where a cloned cookbook and the pinned runs' downloaded logs are kept.",
)
@options.api_url_option()
@options.date_option("generatedOn (default: today).")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print every write (files, commits, API calls) and make none. Works without tokens: "
    "a side without one is read from the event file alone.",
)
@options.folder_option(
    "--runs",
    "local_runs",
    help="Downloaded runs (<run_id>/...) a dry run without a token reads instead of the "
    "run's artifacts.",
)
@click.option(
    "--model",
    default=None,
    metavar="ORG/MODEL",
    help="Handle only this cookbook model (the workflow runs one job per model).",
)
@click.option(
    "--models-only",
    is_flag=True,
    help="Print the models the event can touch (event data + sync.yaml; no token, no API).",
)
@click.option("--json", "as_json", is_flag=True, help="With --models-only: a JSON list.")
@options.file_option(
    "--handoff",
    help="The scheduled run's open InferenceX PRs and the configs each carries, found once per "
    "event: written by the gate (--models-only, with a token and --inferencex-clone), read by "
    "each model's job, which then neither lists nor discovers them again.",
)
@options.folder_option(
    "--ledger",
    "ledger_dir",
    help="What earlier scheduled runs found up to date (the workflow keeps it in its cache): "
    "a PR whose head and updated_at did not move since is not read again, except for a daily "
    "re-check.",
)
@click.option(
    "--schedule",
    is_flag=True,
    help="The scheduled run: reconcile every open InferenceX PR with configs and the bot's "
    "cookbook PRs, whatever the event (implied by a schedule event, and by workflow_dispatch "
    "without cookbook_pr). Writes nothing when nothing changed.",
)
def bot_command(
    event_path: Path,
    event_name: str,
    config_path: Path,
    models_only: bool,
    as_json: bool,
    **options: Any,
) -> int:
    """Handle a GitHub event: /use pins, cookbook PRs, status comments."""
    from syncer.github.event import BadEvent

    secrets.install()
    # Checked here, not by click: a missing option is one `error:` line like every misuse
    # (click's usage block is four), and neither file nor name is guessed.
    if event_path is None:
        raise SyncError("--event FILE is required: the event payload (GITHUB_EVENT_PATH)")
    _check_remotes(options)
    try:
        if models_only:
            options.pop("model")
            return _models_only(event_path, event_name, config_path, as_json=as_json, **options)
        return _run(event_path, event_name, config_path, **options)
    except BadEvent as exc:
        # The CLI prints it (masked, one line like every SyncError) naming the event file.
        exc.path = str(event_path)
        raise


# The events the workflow (.github/workflows/cookbook-sync.yml) hands the bot.
EVENT_NAMES = (
    "issue_comment",
    "pull_request",
    "schedule",
    "repository_dispatch",
    "workflow_dispatch",
)


def _check_event_name(event_name: str) -> None:
    """A name the bot answers; anything else is a mistake (a typo would otherwise do nothing
    and exit 0, which the workflow reads as done)."""
    if not event_name:
        raise SyncError("no event name: pass --event-name or set GITHUB_EVENT_NAME")
    if event_name not in EVENT_NAMES:
        raise SyncError(
            f"--event-name {js(event_name, 60)}: expected one of {', '.join(EVENT_NAMES)}"
        )


def _check_remotes(options: dict[str, Any]) -> None:
    """Every remote the options name, refused before any git runs when git could take it
    for an option or a helper program (``--inferencex-remote '--upload-pack=…'``)."""
    from syncer import gitrun

    for flag in ("--inferencex-remote", "--cookbook", "--push-url"):
        value = options.get(flag.removeprefix("--").replace("-", "_"))
        if value is not None:
            gitrun.remote(str(value), flag)


def _models_only(
    event_path: Path, event_name: str, config_path: Path, *, as_json: bool, **options: Any
) -> int:
    """The models the event can touch (event data + sync.yaml; no token, no API)."""
    from syncer.github import event
    from syncer.publish.routing import event_models

    config, payload = load_sync_config(config_path), event.load(event_path)
    _check_event_name(event_name)
    if options["schedule"] or event.is_schedule(event_name, payload):
        # The reconcile looks at every model: one job per model, each in its group; the open
        # PRs and their configs are found here, once, for all of them.
        if options["handoff"] is not None:
            _hand_off(config, options)
        return _print_matrix([m.path for m in config.models], as_json=as_json)
    if options["handoff"] is not None:
        from syncer.publish import handoff

        handoff.write_none(options["handoff"])  # an event's jobs list nothing
    discover = None
    clone = options["inferencex_clone"]
    if clone is not None:
        from syncer.publish.prconfigs import InferenceXClone

        ix = InferenceXClone(_gate_settings(config, options), gh=None)

        def discover(number: int, head: str | None, base: str | None) -> list[str]:
            keys = ix.keys_at(number, head, base)
            notice = keys.notice_model(config)
            return [m.path for m, _ in keys.mapped] + ([notice] if notice else [])

    try:
        models = event_models(
            config,
            event_name,
            payload,
            inferencex_repo=options["inferencex_repo"],
            cookbook_repo=options["cookbook_repo"],
            discover=discover,
        )
    finally:
        if clone is not None:
            ix.close()
    return _print_matrix(models, as_json=as_json)


def _print_matrix(models: list[str], *, as_json: bool) -> int:
    """The gate's answer: no report for people but the value of the workflow's job matrix
    (``fromJSON``), compact JSON or the paths separated by spaces; model paths are
    [A-Za-z0-9._-]/[...] only."""
    click.echo(json.dumps(models, separators=(",", ":")) if as_json else " ".join(models))
    return 0


def _gate_settings(config: Any, options: dict[str, Any]) -> Any:
    from syncer.publish.settings import Settings

    return Settings(
        config=config,
        inferencex=options["inferencex"],
        cookbook=options["cookbook"],
        cache_dir=options["cache_dir"],
        inferencex_repo=options["inferencex_repo"],
        inferencex_clone=_clone(options["inferencex_clone"]),
        inferencex_remote=options["inferencex_remote"],
    )


def _hand_off(config: Any, options: dict[str, Any]) -> None:
    """The scheduled run's open PRs, listed once, and each one's configs, discovered once,
    into ``--handoff`` for every model's job."""
    from syncer.publish import handoff
    from syncer.publish.prconfigs import InferenceXClone, PRKeys

    token = secrets.token_from_env(("INFX_TOKEN", "GITHUB_TOKEN"), required=False)
    if token is None or options["inferencex_clone"] is None:
        raise SyncError("--handoff needs GITHUB_TOKEN (the open PRs) and --inferencex-clone")
    from syncer.commands import options as cli_options

    gh = cli_options.github_client(token, options["api_url"], login_env="SYNC_INFX_LOGIN")
    settings = _gate_settings(config, options)
    pulls = gh.pulls.open(settings.inferencex_repo)
    ix = InferenceXClone(settings, gh=gh)
    found: dict[int, PRKeys | None] = {}
    try:
        for pull in pulls:
            try:
                found[pull.number] = ix.keys(pull)
            except SyncError:
                found[pull.number] = None  # the PR's job finds it again and reports why
    finally:
        ix.close()
    handoff.write(options["handoff"], pulls, found)


def _run(event_path: Path, event_name: str, config_path: Path, **opts: Any) -> int:
    """The event handled (the scheduled run: every open PR reconciled) and its report shown;
    the inputs are checked in the order a user fixes them, before any token is asked for."""
    from syncer.github import event
    from syncer.github.plan import Plan

    if bool(opts["push_repo"]) != bool(opts["push_url"]):
        raise SyncError("--push-repo and --push-url go together (the fork and its git URL)")
    payload = event.load(event_path)
    _check_event_name(event_name)
    config = load_sync_config(config_path)
    model = opts["model"]
    if model is not None:
        model = config.model(model).path  # unknown: a SyncError listing the known models
    plan = Plan(dry_run=opts["dry_run"])
    reconciling = opts["schedule"] or event.is_schedule(event_name, payload)
    tokens = _tokens(reconciling=reconciling, dry_run=plan.dry_run)
    # The rest of syncer.publish imports PyGithub: loaded only once the inputs are read and
    # found good, so an event file refused (a third of a second sooner) never pays for it.
    from syncer.publish.bot import Bot
    from syncer.publish.bot_report import BotRun
    from syncer.publish.git import Identity
    from syncer.publish.reconcile import reconcile

    settings = _settings(config, model, opts)
    infx, cookbook_gh = _clients(settings, payload, plan, tokens, opts["api_url"])
    sides = zip(("InferenceX", "the cookbook"), tokens, strict=True)
    unread = [side for side, token in sides if token is None]
    try:
        bot = Bot(
            settings,
            infx=infx,
            cookbook_gh=cookbook_gh,
            plan=plan,
            identity=Identity.from_env(),
            git_token=tokens[1],
        )
    except BaseException:
        _show(BotRun(unread))
        raise
    try:
        outcome = reconcile(bot) if reconciling else bot.handle(event_name, payload)
    except BaseException as exc:
        # A dry run that stops still shows what it would have written up to the error, the
        # status comment that would carry the error included (docs/bot.md); then the error.
        stopped = plan.dry_run and isinstance(exc, SyncError)
        _show(BotRun(unread, writes=plan.writes if stopped else None))
        raise
    return _show(BotRun(unread, outcome.lines, plan.writes if plan.dry_run else None))


def _tokens(*, reconciling: bool, dry_run: bool) -> tuple[str | None, str | None]:
    """The InferenceX and the cookbook token, from the environment. A dry run of an event needs
    none: GitHub is read only on the side that has one. The reconcile has nothing to stand in
    for GitHub (its work is the API's state: the open PRs, the bot's PRs), so without both
    tokens it would find nothing and say nothing."""
    required = reconciling or not dry_run
    try:
        return (
            secrets.token_from_env(("INFX_TOKEN", "GITHUB_TOKEN"), required=required),
            secrets.token_from_env(("COOKBOOK_TOKEN",), required=required),
        )
    except SyncError as exc:
        if reconciling and dry_run:
            raise SyncError(f"{exc} (the scheduled run reads GitHub, a dry run too)") from None
        raise


def _settings(config: SyncConfig, model: str | None, opts: dict[str, Any]) -> Settings:
    """What the run is given; the bot's clones opened (or created bare)."""
    from syncer.publish.settings import Settings

    clone, srt_clone = opts["inferencex_clone"], opts["srt_slurm_clone"]
    return Settings(
        config=config,
        inferencex=opts["inferencex"],
        cookbook=opts["cookbook"],
        cache_dir=opts["cache_dir"],
        inferencex_repo=opts["inferencex_repo"],
        cookbook_repo=opts["cookbook_repo"],
        push_repo=opts["push_repo"],
        push_url=opts["push_url"],
        today=opts["today"],
        model=model,
        local_runs=opts["local_runs"],
        inferencex_clone=_clone(clone) if clone else None,
        inferencex_remote=opts["inferencex_remote"],
        srt_slurm_clone=_clone(srt_clone, "srt-slurm") if srt_clone else None,
        handoff=opts["handoff"],
        ledger_dir=opts["ledger_dir"],
    )


def _clients(
    settings: Settings,
    payload: Payload,
    plan: Plan,
    tokens: tuple[str | None, str | None],
    api_url: str,
) -> tuple[GitHubClient, GitHubClient]:
    """The InferenceX and the cookbook client: GitHub's where there is a token, else (a dry
    run) the event file standing in for it."""
    from syncer.github.offline import EventGitHub
    from syncer.publish.prconfigs import pr_head

    def head_of(number: int) -> str | None:
        # The workflow's mode: the PR head is its refs/pull/<n>/head on the clone's remote.
        return pr_head(settings, number)

    def client(token: str | None, login_env: str) -> GitHubClient:
        if token is None:
            return EventGitHub(
                payload,
                plan=plan,
                checkout=settings.inferencex,
                login=os.environ.get(login_env) or None,
                head_of=head_of if settings.inferencex_clone is not None else None,
            )
        return options.github_client(token, api_url, login_env=login_env, plan=plan)

    return client(tokens[0], "SYNC_INFX_LOGIN"), client(tokens[1], "SYNC_COOKBOOK_LOGIN")


def _show(run: BotRun) -> int:
    """The run's report on stdout (:mod:`syncer.reporting`); the command's exit code."""
    from syncer.publish.bot_report import bot_report
    from syncer.reporting import Format

    return options.print_report(bot_report(run), Format.TEXT)


def _clone(path: Path, what: str = "InferenceX") -> Path:
    """One of the bot's clones: an existing git repository, or a new bare one."""
    from syncer.inferencex import commits

    if commits.is_clone(path):
        return path
    if path.exists() and any(path.iterdir()):
        raise SyncError(f"not a git repository (the bot's {what} clone)", path=str(path))
    commits.init_bare(path)
    return path
