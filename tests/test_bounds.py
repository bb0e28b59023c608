"""Issue 36, points 2, 7 and 9: every loop an input drives is bounded, and a value outside
the shapes InferenceX and srt-slurm allow is one ``error:`` line (file, line, what was
expected; exit 2) before anything is rendered.

Each test runs the real command (``python -m syncer`` in a copy of the project) under a 1 GB
address-space limit, so that the code before the fix fails it by running out of memory
(exit 3) or by the subprocess guard, never by a timed assertion: what is asserted is the
refusal, or a count of work done against its bound.
"""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import forkserver
import pytest
from test_hardening import KEY, MASTER, copy_project, edit, error_line

ROOT = Path(__file__).resolve().parent.parent
MEMORY = 1 << 30


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def sync(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``sync ARGS`` as a user runs it, in at most 1 GB of memory (the forkserver's fork takes
    the client's lower limit, and starts with the server's address space already in it: no
    more room than the real interpreter has)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*forkserver.command(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        preexec_fn=_limited,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path)


FIRST_ROW = "conc-list: [1, 4, 16], srt-recipe: agentic.yaml"


def _files(project: Path) -> dict[str, bytes]:
    """Every file of the project copy and its bytes: what a refused command must not change."""
    return {str(p): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# ---- 2. a master row's concurrencies and sizes ------------------------------------------------


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("conc-start: 0, conc-end: 8", "conc-start must be a positive integer, got 0"),
        ("conc-start: -4, conc-end: 8", "conc-start must be a positive integer, got -4"),
        ('conc-start: "x", conc-end: 8', 'conc-start must be a positive integer, got "x"'),
        ("conc-start: 1, conc-end: 99999999999", "conc-end must be at most 1048576"),
        ("conc-start: 64, conc-end: 8", "conc-start (64) must not be above conc-end (8)"),
        ("conc-list: [4, 0]", "conc-list must be a list of 1 to 64 integers from 1 to"),
        (f"conc-list: [{', '.join(['1'] * 65)}]", "conc-list must be a list of 1 to 64"),
    ],
)
def test_a_master_row_conc_outside_what_inferencex_sweeps_is_one_error_line(
    project: Path, row: str, expected: str
) -> None:
    master = project / MASTER
    edit(master, FIRST_ROW, f"{row}, srt-recipe: agentic.yaml")
    line = _line_of(master, row)
    for command in (["render", KEY], ["verify", KEY]):
        message = error_line(sync(project, *command))
        assert message.startswith(f"error: {master}:{line}: {KEY}: search-space row 0: ")
        assert expected in message


def test_a_master_row_size_too_large_names_its_bound_and_line(project: Path) -> None:
    master = project / MASTER
    edit(master, "{ tp: 4, ep: 1,", "{ tp: 40000000, ep: 1,")
    message = error_line(sync(project, "render", KEY))
    line = _line_of(master, "tp: 40000000")
    assert message == (
        f"error: {master}:{line}: {KEY}: search-space row 0: tp must be at most 4096, got 40000000"
    )


# ---- 7 and 9. a recipe's counts -----------------------------------------------------------------

RECIPE = (
    "examples/inferencex/inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/"
    "dsv41flash/sglang/gb300-fp4-mtp/agentic.yaml"
)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # a node of no GPUs dropped every worker's CUDA_VISIBLE_DEVICES without a word
        ("gpus_per_node: 4", "gpus_per_node: 0", "resources.gpus_per_node must be an integer "
         "from 1 to 64, got 0"),
        ("gpus_per_node: 4", "gpus_per_node: -8", "resources.gpus_per_node must be an integer "
         "from 1 to 64, got -8"),
        # 30,000,000 workers in a 10 KB recipe: one pinning per worker, never finished
        ("      workers: 1\n", "      workers: 30000000\n", "roles.agg.workers must be an "
         "integer from 1 to 1024, got 30000000"),
        ("      gpus: 4\n", "      gpus: 1000000000000\n",
         "roles.agg.gpus must be an integer from 1 to 4096, got 1000000000000"),
        ("      nodes: 1\n", "      nodes: 5000\n", "roles.agg.nodes must be an integer from 0 "
         "to 1024, got 5000"),
    ],
)  # fmt: skip
def test_a_recipe_count_outside_what_a_cluster_holds_is_one_error_line(
    project: Path, old: str, new: str, expected: str
) -> None:
    recipe = project / RECIPE
    edit(recipe, old, new)
    line = _line_of(recipe, new.strip().splitlines()[-1])
    assert error_line(sync(project, "render", KEY)) == f"error: {recipe}:{line}: {expected}"


# ---- 9. a golden acceptance length ----------------------------------------------------------

GOLDEN = "examples/inferencex/inferencex-e2e/infx/golden_al_distribution/dsv41flash_dspark.yaml"


@pytest.mark.parametrize(
    "value",
    ['"nan"', ".nan", ".inf", '"3.51; touch PWNED"', "0.5", "-3.51", "1e400", "[3.51]"],
)
def test_a_golden_acceptance_length_that_is_no_number_is_refused_before_publishing(
    project: Path, value: str
) -> None:
    golden = project / GOLDEN
    edit(golden, "    5: 3.51\n", f"    5: {value}\n")
    line = _line_of(golden, f"5: {value}")
    expected = (
        f"{GOLDEN}:{line}: golden AL thinking_on value for draft length 5 must be a "
        "decimal number from 1 to 100 (an acceptance length), got "
    )
    assert expected in error_line(sync(project, "render", KEY))
    before = _files(project)
    assert expected in error_line(sync(project, "generate", "--all"))
    assert _files(project) == before
    assert not (project / "PWNED").exists()


# ---- 7. records of a sweep log continued over many lines ---------------------------------------

RUN = "examples/runs/41000000001"


def _log(project: Path) -> Path:
    return next((project / RUN).rglob("sweep_5230101.log"))


def _after_first(log: Path, marker: str, added: str) -> int:
    """Add ``added`` after the first line holding ``marker``; that line's number."""
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if marker in line)
    log.write_text("".join([*lines[: at + 1], added, *lines[at + 1 :]]), encoding="utf-8")
    return at + 1


def test_an_env_record_continued_past_the_line_bound_is_refused_naming_its_line(
    project: Path,
) -> None:
    log = _log(project)
    line = _after_first(log, "] Env: ", ("x" * 999 + "\n") * 4300)  # 4.3 MB in 4,300 lines
    message = error_line(sync(project, "verify", KEY, "--run", RUN))
    assert message.endswith(
        f"{log.name}:{line}: a logged Env: record is longer than 4 MiB over its lines "
        "(not srt-slurm output)"
    )


def test_an_env_record_of_half_a_million_lines_is_read_once(project: Path) -> None:
    """2 MB in 500,000 lines, under the bound: joining the record again for every line (about
    250 GB copied) never finished; read once, the values are compared as any others."""
    _after_first(_log(project), "] Env: ", "a b\n" * 500_000)
    proc = sync(project, "verify", KEY, "--run", RUN, "--format", "json")
    assert proc.returncode == 1, proc.stderr
    assert "SGLANG_TIMEOUT_KEEP_ALIVE" in proc.stdout  # its value now runs on over the lines


def test_a_command_quote_open_over_many_lines_is_read_once(project: Path) -> None:
    """20,000 lines that each close and reopen the quote: splitting the whole command again
    for every line (5,000 lines took 50 s) is replaced by reading each line once."""
    log = _log(project)
    text = log.read_text(encoding="utf-8")
    command = next(x for x in text.splitlines(keepends=True) if "] Command: " in x)
    log.write_text(text.replace(command, command[:-1] + " '\n" + "x' 'y\n" * 20_000 + "'\n"))
    proc = sync(project, "verify", KEY, "--run", RUN, "--format", "json")
    assert proc.returncode == 1, proc.stderr
    # the last flag's value is 3600 then the words the quotes made, one per line
    assert proc.stdout.count("\\nx y") == 20_000
    assert '"right": "3600 \\nx y\\nx y' in proc.stdout


# ---- 7. lint's nested literal loops -----------------------------------------------------------

NAMES = "[" + ", ".join(f"'n{i}'" for i in range(1000)) + "]"
NESTED_LOOPS_SERVER_ARGS = (
    "import argparse\n\n"
    f"NAMES = {NAMES}\n"
    "\n\nclass ServerArgs:\n    @staticmethod\n    def add_cli_args(parser):\n"
    "        parser.add_argument('--model-path')\n"
    "        for a in NAMES:\n"
    "            for b in NAMES:\n"
    "                for c in NAMES:\n"
    "                    parser.add_argument('--x-' + a + b + c)\n"
)


def test_lint_unrolls_a_bounded_number_of_loop_iterations_and_reports_the_rest_unresolved(
    tmp_path: Path,
) -> None:
    """Three nested loops over 1,000 literal names: a billion walks of the body never ended;
    past the bound the body is walked once with its names unknown, and said so."""
    import json

    from lintrepo import _cell, commit_files, git, module_text

    repo = tmp_path / "sglang"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    files = {"python/sglang/srt/server_args.py": NESTED_LOOPS_SERVER_ARGS}
    commit = commit_files(repo, files, "nested loops")
    cell = _cell("c#0", "lmsysorg/sglang:v0.5.9", commit, [["--model-path", "m"], ["--x-n0n0n0"]])
    (tmp_path / "m.jsx").write_text(module_text([cell]))
    proc = sync(tmp_path, "lint", "m.jsx", "--sglang", str(repo), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    [version] = json.loads(proc.stdout)["versions"]
    line = NESTED_LOOPS_SERVER_ARGS.splitlines().index(
        "                    parser.add_argument('--x-' + a + b + c)"
    )
    assert version["worker"]["dynamic"] == [
        f"line {line + 1}: an option string the file does not pin down"
    ]


# ---- 7. a module whose references build far more than it holds ----------------------------------

MODULE = "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"


def test_a_module_whose_env_refs_expand_past_the_bound_is_refused_by_diff_and_decode(
    project: Path,
) -> None:
    """Each env of the pool grown to 30,000 entries (1.1 MB): every block naming it by envRef
    is built in full, on every point and KV tier; diffing such a module with itself grew
    with (uses x size), 96 s and 1.3 GB at 4 MB. The built entries are counted and bounded."""
    import json

    module = project / MODULE
    head, _, body = module.read_text(encoding="utf-8").partition("export const agentx = ")
    data = json.loads(body.rstrip().rstrip(";"))
    for env in data["envs"]:
        env.update({f"K{k:05d}": "v" for k in range(30_000)})
    module.write_text(head + "export const agentx = " + json.dumps(data, indent=1) + ";\n")
    for command in (["diff", MODULE, MODULE], ["decode", MODULE, "--all", "--format", "json"]):
        message = error_line(sync(project, *command))
        assert message.startswith(f"error: {MODULE}:"), message
        assert message.endswith(
            "the module's refs, envRefs, patches and KV tiers build more than 500,000 flags "
            "and env entries; refusing it"
        )


# ---- 7. YAML aliases shared by every variant ---------------------------------------------------

NESTED_ALIASES = """  observability:
    enabled: false
    l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    l1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0]
    l2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]
    l3: &l3 [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2]
    l4: &l4 [*l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3]
    l5: [*l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4]
"""


def test_aliases_under_the_node_cap_are_resolved_once_per_variant_not_copied_out(
    project: Path,
) -> None:
    """An 8 KB recipe: a block of 1.1 million nodes once expanded (under the 2 million cap)
    written with nested aliases, and 47 variants. Each point binds every variant, and the
    binding copied the aliased block out each time (0.5 s a variant: 23 s for the bundled 7,
    minutes for 47); shared, the block is walked once per binding, whatever it expands to."""
    recipe = project / RECIPE
    edit(recipe, "  observability:\n    enabled: false\n", NESTED_ALIASES)
    unused = "".join(
        f"\noverride_unused_{i}:\n  benchmark:\n    env:\n      CONC: '9{i}'\n" for i in range(40)
    )
    recipe.write_text(recipe.read_text(encoding="utf-8") + unused, encoding="utf-8")
    assert len(recipe.read_bytes()) < 10_000
    proc = sync(project, "render", KEY, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    import json

    assert len(json.loads(proc.stdout)["points"]) == 7
