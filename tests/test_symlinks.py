"""Issue 36.4: no symlink is followed out of a folder the tool scans or writes.

``generate --out`` / ``--pages`` wrote through a link inside the folder onto a file outside it;
``lint --all``, ``audit --cookbook`` and ``verify --cookbook`` read ``zz.jsx -> /etc/passwd``.
Each through the real command, in a copy of the project; a file the user names is still
followed (README: a symlink given as an input file names the file it points to).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from test_hardening import KEY, MODULE, PAGE, copy_project, error_line, sync

OUTSIDE = "outside secret: root:x:0:0\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "project")


def _outside(project: Path) -> Path:
    target = project.parent / "outside.txt"
    target.write_text(OUTSIDE)
    return target


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (links not followed) and a digest of what it holds."""
    return {
        str(p.relative_to(root)): (
            f"-> {p.readlink()}" if p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest()
        )
        for p in sorted(root.rglob("*"))
        if p.is_symlink() or p.is_file()
    }


def _generate(project: Path, *extra: str):
    return sync(
        project, "generate", "--all", "--out", "out", "--pages", "examples/cookbook",
        "--date", "2026-10-13", *extra,
    )  # fmt: skip


def test_generate_refuses_a_module_that_is_a_link_out_of_out(project: Path) -> None:
    outside = _outside(project)
    module = project / "out" / "deepseek-ai" / "deepseek-v4_1.jsx"
    module.parent.mkdir(parents=True)
    module.symlink_to(outside)
    before = _tree(project)
    line = error_line(_generate(project))
    assert line == (
        "error: out/deepseek-ai/deepseek-v4_1.jsx: data module: a symlink, or under one, "
        "leading out of out; not followed"
    )
    assert outside.read_text() == OUTSIDE
    assert _tree(project) == before  # nothing written: neither the module nor the page


def test_generate_refuses_a_folder_of_out_that_is_a_link_out(project: Path) -> None:
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    (project / "out").mkdir()
    (project / "out" / "deepseek-ai").symlink_to(elsewhere)
    line = error_line(_generate(project))
    assert "leading out of out; not followed" in line, line
    assert list(elsewhere.iterdir()) == []


def test_generate_refuses_a_page_that_is_a_link_out_of_pages(project: Path) -> None:
    outside = project.parent / "page.mdx"
    shutil.copy(project / PAGE, outside)
    # a section the generator would rewrite: without the fix, the outside file was replaced
    text = outside.read_text()
    (project / PAGE).unlink()
    (project / PAGE).symlink_to(outside)
    before, kept = _tree(project), outside.read_bytes()
    line = error_line(_generate(project, "--force-page"))
    assert line.startswith(f"error: {PAGE}: cookbook page: a symlink"), line
    assert outside.read_bytes() == kept and outside.read_text() == text
    assert _tree(project) == before and not (project / "out").exists()


def test_generate_writes_through_a_link_that_stays_inside(project: Path) -> None:
    out = project / "out" / "deepseek-ai"
    out.mkdir(parents=True)
    (out / "real.jsx").write_text("// placeholder\n")
    (out / "deepseek-v4_1.jsx").symlink_to("real.jsx")
    proc = _generate(project)
    assert proc.returncode == 0, proc.stderr
    assert (out / "deepseek-v4_1.jsx").is_symlink()
    assert (out / "real.jsx").read_text().startswith("// GENERATED")


def _linked_module(project: Path) -> Path:
    outside = _outside(project)
    (project / "cookbook_snippets" / "deepseek-ai" / "zz.jsx").symlink_to(outside)
    return outside


@pytest.mark.parametrize(
    "args",
    [
        ["lint", "--all", "--cookbook", "cookbook_snippets"],
        ["audit", "--cookbook", "cookbook_snippets"],
        ["verify", KEY, "--cookbook", "cookbook_snippets"],
    ],
    ids=["lint", "audit", "verify"],
)
def test_a_scan_refuses_a_module_that_is_a_link_out_of_the_folder(
    project: Path, args: list[str]
) -> None:
    _linked_module(project)
    proc = sync(project, *args)
    line = error_line(proc)
    assert line == (
        "error: cookbook_snippets/deepseek-ai/zz.jsx: cannot read data module: a symlink, or "
        "under one, leading out of cookbook_snippets; not followed"
    )
    assert "outside secret" not in proc.stdout + proc.stderr


def test_a_scan_reads_a_link_that_stays_inside_and_never_walks_a_linked_folder(
    project: Path,
) -> None:
    snippets = project / "cookbook_snippets"
    (snippets / "deepseek-ai" / "again.jsx").symlink_to("deepseek-v4_1.jsx")
    outside = project.parent / "other-org"
    outside.mkdir()
    (outside / "m.jsx").write_text("not a module at all\n")
    (snippets / "other-org").symlink_to(outside)  # a linked folder: never walked into
    proc = sync(project, "audit", "--cookbook", "cookbook_snippets", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert "again.jsx" in proc.stdout and "m.jsx" not in proc.stdout


def test_a_module_named_on_the_command_line_is_followed(project: Path) -> None:
    # README: a symlink given directly as an input file is followed to the file it names.
    moved = project.parent / "module.jsx"
    shutil.copy(project / MODULE, moved)
    (project / "named.jsx").symlink_to(moved)
    proc = sync(project, "decode", "named.jsx", "--all", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("{") or proc.stdout.startswith("[")
    proc = sync(project, "verify", KEY, "--cookbook", "named.jsx")
    assert proc.returncode in (0, 1), proc.stderr
    assert "named.jsx" in proc.stdout


def test_write_all_checks_every_target_before_writing_any(tmp_path: Path) -> None:
    # The second line of defence (generate checks its paths first): a set of files of which
    # one lies under a folder linking out is written not at all, the first one included.
    from syncer.errors import SyncError
    from syncer.fsio import write_all

    out, pages, elsewhere = tmp_path / "out", tmp_path / "pages", tmp_path / "elsewhere"
    out.mkdir()
    pages.mkdir()
    elsewhere.mkdir()
    (pages / "docs").symlink_to(elsewhere)
    files = {out / "org" / "m.jsx": "module\n", pages / "docs" / "p.mdx": "page\n"}
    with pytest.raises(SyncError) as info:
        write_all(files, folders=(out, pages))
    assert info.value.path == str(pages / "docs" / "p.mdx")
    assert "cannot write the file: a symlink, or under one, leading out of" in info.value.message
    assert list(out.iterdir()) == [] and list(elsewhere.iterdir()) == []
    # A file outside every folder given is refused too (a page path climbing with '..').
    with pytest.raises(SyncError, match="outside"):
        write_all({pages / ".." / "x.mdx": "x\n"}, folders=(out, pages))
    assert not (tmp_path / "x.mdx").exists()
    # Links that stay inside are written through; without folders, a named file is followed.
    (out / "org").mkdir()
    (out / "org" / "real.jsx").write_text("old\n")
    (out / "org" / "m.jsx").symlink_to("real.jsx")
    write_all({out / "org" / "m.jsx": "new\n"}, folders=(out,))
    assert (out / "org" / "real.jsx").read_text() == "new\n"
    (tmp_path / "named.txt").symlink_to(elsewhere / "named-target.txt")
    (elsewhere / "named-target.txt").write_text("old\n")
    write_all({tmp_path / "named.txt": "named\n"})
    assert (elsewhere / "named-target.txt").read_text() == "named\n"


def test_audit_refuses_a_checkout_whose_modules_folder_links_out(project: Path) -> None:
    # audit --cookbook CHECKOUT reads docs/src/snippets/agentx: a docs/ that is a link out of
    # the checkout is no folder of its modules.
    elsewhere = project.parent / "elsewhere"
    shutil.copytree(project / "cookbook_snippets", elsewhere / "src" / "snippets" / "agentx")
    checkout = project / "checkout"
    checkout.mkdir()
    (checkout / "docs").symlink_to(elsewhere)
    line = error_line(sync(project, "audit", "--cookbook", "checkout"))
    assert line == (
        "error: checkout/docs/src/snippets/agentx: cannot read the data modules' folder: a "
        "symlink, or under one, leading out of checkout; not followed"
    )


@pytest.mark.parametrize("what", ["module", "org folder", "page"])
def test_adopt_refuses_a_module_or_page_linking_out_of_the_checkout(
    project: Path, what: str
) -> None:
    checkout = project / "sglang"
    snippets = checkout / "docs/src/snippets/agentx"
    page = checkout / "docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx"
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(project / MODULE, elsewhere / "deepseek-v4_1.jsx")
    shutil.copy(project / PAGE, elsewhere / "page.mdx")
    snippets.mkdir(parents=True)
    page.parent.mkdir(parents=True)
    if what == "org folder":
        (snippets / "deepseek-ai").symlink_to(elsewhere)
    else:
        (snippets / "deepseek-ai").mkdir()
        module = snippets / "deepseek-ai" / "deepseek-v4_1.jsx"
        if what == "module":
            module.symlink_to(elsewhere / "deepseek-v4_1.jsx")
        else:
            shutil.copy(project / MODULE, module)
    if what == "page":
        page.symlink_to(elsewhere / "page.mdx")
    else:
        shutil.copy(project / PAGE, page)
    line = error_line(sync(project, "adopt", "--cookbook", "sglang", "--out", "adopted.yaml"))
    shown = (
        f"sglang/{PAGE.removeprefix('examples/cookbook/')}: cannot read cookbook page"
        if what == "page"
        else "sglang/docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx: "
        "cannot read data module"
    )
    assert line == f"error: {shown}: a symlink, or under one, leading out of sglang; not followed"
    assert not (project / "adopted.yaml").exists()
