"""The srt-slurm version chosen in a file the launch script sources (issue 40.8): InferenceX PR
#2384 (commits 8fa3b4a3c and d8bdc7172, branch agent/standardize-srt-slurm-v1.0.36) moved every
multinode launcher's clone into ``runners/srt_slurm.sh``, sourced as ``source "$(dirname
"${BASH_SOURCE[0]}")/srt_slurm.sh"``, which reads the ref from
``configs/srt-slurm-version.txt`` (``read -r V < "$ROOT/configs/srt-slurm-version.txt"``, the
root a multi-line ``$(cd …/..; pwd)``) and clones it in a function with a ``git clone \\``
spread over lines. Before, the launch script was judged to clone nothing (the newest rules
rendered, neither file an input of any key). Our own fixtures of that shape, on the eras tree
(tests/fixtures/eras), through the real command and real git history."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import forkserver
import pytest
from conftest import TESTS
from infxrepo import InferenceXRepo, git

from syncer.inferencex import commits
from syncer.inferencex.discovery import changed_configs, files_read
from syncer.inferencex.master import load_master

ERAS = TESTS / "fixtures" / "eras" / "inferencex"
AGG = "m2-fp4-gb300-dynamo-sglang-agentic-agg"
SCRIPT = "runners/launch_gb300-test.sh"
SOURCED = "runners/srt_slurm.sh"
VERSION = "configs/srt-slurm-version.txt"

# The launch script: sources the shared set-up, then calls it (no clone of its own).
LAUNCH = """\
#!/usr/bin/env bash
# Our miniature of a launcher after the shared srt-slurm set-up: never run.
set -eo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/srt_slurm.sh" || exit 1
source "$GITHUB_WORKSPACE/.venv/bin/activate"

cat > srtslurm.yaml <<YAML
gpus_per_node: 4
YAML

SRT_REPO_DIR="${GITHUB_WORKSPACE}/srt-slurm"
make_srt_slurm_checkout "$SRT_REPO_DIR" || exit 1
cd "$SRT_REPO_DIR" || exit 1
srtctl apply -f "$CONFIG_FILE"
"""

# The shared set-up, shaped like runners/srt_slurm.sh @InferenceX 8fa3b4a3c (our own text).
SHARED = """\
#!/usr/bin/env bash
# One srt-slurm for every multinode launcher.

TREE_ROOT="$(
    cd "$(dirname "${BASH_SOURCE[0]}")/.." >/dev/null 2>&1 || exit 1
    pwd
)"
VERSION_FILE="${TREE_ROOT}/configs/srt-slurm-version.txt"
SRT_SLURM_URL="https://github.com/NVIDIA/srt-slurm.git"

if [[ ! -r "$VERSION_FILE" ]]; then
    echo "no srt-slurm version in $VERSION_FILE" >&2
    return 1
fi
read -r SRT_SLURM_REF < "$VERSION_FILE"

make_srt_slurm_checkout() {
    local target=$1
    if [[ -z "$target" ]]; then
        return 1
    fi
    rm -rf "$target"
    git clone \\
        --branch "$SRT_SLURM_REF" \\
        --single-branch \\
        "$SRT_SLURM_URL" \\
        "$target" || return 1
}
"""
CLONE_LINE = SHARED.splitlines().index("    git clone \\") + 1


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    tree = shutil.copytree(ERAS, tmp_path / "inferencex")
    (tree / SCRIPT).write_text(LAUNCH)
    (tree / SOURCED).write_text(SHARED)
    (tree / VERSION).write_text("v1.0.38\n")
    return tree


def render(tree: Path, key: str = AGG) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*forkserver.command(), "render", key, "--inferencex", str(tree), "--point", "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_version_the_sourced_file_reads_is_the_release(tree: Path) -> None:
    """Before: `# rules: srt-slurm 2.x rules (…)`, the launch script judged to clone nothing."""
    done = render(tree)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"# rules: srt-slurm v1.0.38 (1.x rules; checked out by {SOURCED} line {CLONE_LINE}, "
        f"the ref read from {VERSION})"
    )
    (tree / VERSION).write_text("sa-submission-q2-2026\n")
    assert "srt-slurm sa-submission-q2-2026 " in render(tree).stdout.splitlines()[0]


def test_both_files_are_inputs_of_every_key_using_the_script(tree: Path) -> None:
    master = load_master(tree)
    for key in (AGG, "m2-fp4-gb300-dynamo-sglang-agentic-disagg"):
        assert {SCRIPT, SOURCED, VERSION} <= files_read(master, key), key


def test_a_change_to_the_version_file_is_discovered(tmp_path: Path, tree: Path) -> None:
    repo = InferenceXRepo(tmp_path / "repo", tree=tree)
    repo.write(VERSION, "v1.0.44\n")
    head = repo.commit("srt-slurm v1.0.44 for every launcher")
    clone = repo.clone_for_bot(tmp_path / "bot")
    git("fetch", "--quiet", str(repo.work), head, cwd=clone)
    with commits.Trees(clone) as trees:
        found = {f.key: f.reasons for f in changed_configs(clone, repo.main, head, trees)}
    assert set(found) >= {AGG, "m2-fp4-gb300-dynamo-sglang-agentic-disagg"}
    assert found[AGG] == [f"{VERSION} changed"]


def test_a_launch_script_reading_the_version_file_itself(tree: Path) -> None:
    """`V=$(cat configs/srt-slurm-version.txt)`, relative to where the workflow runs the
    script (the workspace root), and a one-line clone of `--branch "$V"`."""
    (tree / SOURCED).unlink()
    (tree / SCRIPT).write_text(
        "#!/usr/bin/env bash\n"
        "SRT_VERSION=$(cat configs/srt-slurm-version.txt)\n"
        'git clone --branch "$SRT_VERSION" https://github.com/NVIDIA/srt-slurm.git srt || exit 1\n'
    )
    done = render(tree)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"# rules: srt-slurm v1.0.38 (1.x rules; checked out by {SCRIPT} line 3, "
        f"the ref read from {VERSION})"
    )
    assert {SCRIPT, VERSION} <= files_read(load_master(tree), AGG)


def test_a_version_file_the_tree_lacks_is_refused_naming_the_clone(tree: Path) -> None:
    """The tool never guesses a release: the ref stays a variable, and the clone is named."""
    (tree / VERSION).unlink()
    done = render(tree)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f'error: {SOURCED}:{CLONE_LINE}: the srt-slurm ref "$SRT_SLURM_REF" is a variable this '
        "reader cannot resolve (no plain assignment in the script, nor a version file it "
        "reads); cannot tell which srt-slurm ran\n"
    )
    # the file it would read is still an input: adding it is a change of the key
    assert {SCRIPT, SOURCED} <= files_read(load_master(tree), AGG)


def test_a_sourced_file_outside_the_tree_is_not_read(tree: Path) -> None:
    """`source /etc/profile` or a path climbing out of the checkout is no InferenceX file."""
    outside = tree.parent / "outside.sh"
    outside.write_text("git clone --branch v9.9.9 https://github.com/NVIDIA/srt-slurm.git x\n")
    (tree / SCRIPT).write_text(
        "#!/usr/bin/env bash\n"
        f"source {outside}\n"
        'source "$(dirname "${BASH_SOURCE[0]}")/../../outside.sh"\n' + LAUNCH.split("\n", 1)[1]
    )
    done = render(tree)
    assert done.returncode == 0, done.stderr
    assert "srt-slurm v1.0.38 " in done.stdout.splitlines()[0]
    assert "outside" not in " ".join(files_read(load_master(tree), AGG))


def test_a_version_file_added_later_is_read_in_the_same_process(tree: Path) -> None:
    """The parse is kept per version of every file it read, the files it missed included."""
    from syncer.errors import SyncError
    from syncer.inferencex.releases import release_for

    text = (tree / VERSION).read_text()
    (tree / VERSION).unlink()
    with pytest.raises(SyncError, match="cannot resolve"):
        release_for(load_master(tree).entry(AGG))
    (tree / VERSION).write_text(text)
    assert release_for(load_master(tree).entry(AGG)).ref == "v1.0.38"
