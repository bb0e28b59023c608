"""The conformance corpus (issue 41): every published module version and the InferenceX files
its cells were rendered from, kept OUTSIDE the repository in a cache folder; the repository
holds only the manifest (repository, path, commit, length and SHA-256 of each file, and why a
cell's inputs are not public).

    python tests/corpus.py build --reference ../shared/reference --git-dir INFERENCEX.git
    python tests/corpus.py fill --reference ../shared/reference --git-dir INFERENCEX.git

``build`` writes the manifest from the module copies under ``<reference>/cookbook`` and, for each
cell, the InferenceX commit it names, read from a git directory of InferenceX (a snapshot
fetched with the session's tools) or from the byte-exact copies under ``<reference>/pairs``.
``fill`` copies every file the manifest lists into the cache, each checked against its length
and digest (a file no source holds is named and left out). The cache is ``$SYNC_CORPUS_DIR``,
else ``~/.cache/infx-cookbook-sync/corpus``; tests/test_corpus_conformance.py reads it."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

MANIFEST = Path(__file__).resolve().parent / "fixtures" / "corpus-manifest.json"
SGLANG = "sgl-project/sglang"
INFERENCEX = "SemiAnalysisAI/InferenceX"
AGENTX = "docs/src/snippets/agentx"
# The module versions the session's tools list (find_files on sgl-project/sglang under the
# agentx folder, read_file at each commit): short commit -> full commit.
MODULE_COMMITS = {
    "c4b47c36": "c4b47c365fbbd18b3c8a7178afe13b19de10c071",
    "37da6c0b": "37da6c0bd8db05793e6f5a4f5f0d35f3917d22b6",
    "4661ab2b": "4661ab2b3dbe9c4c98da16c9d35447148cfce4ea",
    "2b484a51": "2b484a5142668f1229dce705a234e931ee3cc27a",
    "652614ed": "652614ed7b3ab5a3ea0ae7773f11581e66e349b6",
    "654fcf72": "654fcf72836582c339e0f90dd7b88568d4ed99bb",
}
# Versions the store holds of each module (find_files' count) where the tools name only some.
STORED_VERSIONS = {
    "deepseek-ai/deepseek-v4": 9,
    "deepseek-ai/deepseek-v4_1": 8,
    "zai-org/glm-5.2": 9,
    "Qwen/qwen3.5": 1,
    "Qwen/qwen3.8-flash-next": 1,
}
# Why the store's other versions of a module are not in the corpus: their commits are named by
# none of the session's tools. find_files gives one commit per path (with the count of versions),
# read_file without a commit returns one fixed version, find_string does not index the modules,
# a snapshot of sgl-project/sglang is over fetch's size limit (1.2 GB), and read_file at the
# commits other files of the same folders name (PROBED_COMMITS) holds no version of them.
UNNAMED_VERSIONS = "no tool names their commits (tests/corpus.py: UNNAMED_VERSIONS)"
PROBED_COMMITS = {
    "652614ed": "qwen3.5.jsx, the decoder's newest: deepseek-v4.jsx, glm-5.2.jsx not at it",
    "654fcf72": "qwen3.8-flash-next.jsx: deepseek-v4.jsx not at it",
    "263f1b86": "most autoregressive snippets: deepseek-v4.jsx, glm-5.2.jsx not at it",
    "fe8610c0": "the DeepSeek-V4 page: deepseek-v4.jsx not at it",
    "83572181": "the GLM-5.2 page: glm-5.2.jsx not at it",
    "0c4057b6": "a DeepSeek-V4.1 page version: deepseek-v4_1.jsx not at it",
    "5caafd21": "a DeepSeek-V4.1 page version: deepseek-v4_1.jsx not at it",
    "2b484a51": "deepseek-v4.jsx, deepseek-v4_1.jsx: glm-5.2.jsx not at it",
    "af96f0aa": "_srt_slurm_deployment.jsx: glm-5.2.jsx not at it",
    "00c17caf": "_deployment.jsx: glm-5.2.jsx not at it",
    "b9dec767": "_playground.jsx: glm-5.2.jsx not at it",
    "93b8b5ba": "the DeepSeek-V4 DSpark page: glm-5.2.jsx not at it",
}
# A commit whose copies under pairs/ are not that commit's files (pairs/README.md: the master
# config of 68898926 is 0f45d5f4's, a stand-in).
STAND_INS = {"68898926209230628f500819194999b8dd89f17d": "its master config is not public"}


def cache_dir() -> Path:
    env = os.environ.get("SYNC_CORPUS_DIR")
    return Path(env) if env else Path.home() / ".cache" / "infx-cookbook-sync" / "corpus"


def cached(entry: dict, root: Path | None = None) -> Path:
    """Where a manifest entry's bytes are kept in the cache."""
    return (root or cache_dir()) / entry["repo"] / entry["commit"] / entry["path"]


def _entry(repo: str, path: str, commit: str, data: bytes) -> dict:
    return {
        "repo": repo,
        "path": path,
        "commit": commit,
        "length": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def _module_copies(reference: Path) -> Iterator[tuple[str, str, Path]]:
    """``(model path, short commit, copy)`` of every module version the reference holds."""
    for folder in ("agentx", "agentx-more"):
        for copy in sorted((reference / "cookbook" / folder).glob("*/*/*.jsx")):
            yield f"{copy.parent.parent.name}/{copy.parent.name}", copy.stem, copy


def cell_inputs(module: dict) -> Iterator[tuple[int, str, str]]:
    """``(cell index, InferenceX commit, config key)`` of every cell (both provenance formats:
    the newer ``cell.prov``, the older per-point ``sha``)."""
    for ci, cell in enumerate(module["cells"]):
        prov = cell.get("prov") or {}
        shas = {p.get("sha") or prov.get("sha") for p in cell["points"]}
        key = cell.get("configKey") or cell["id"].split("#")[0]
        for sha in sorted(s for s in shas if s):
            yield ci, sha, key


def _git(git_dir: Path, *args: str) -> bytes | None:
    done = subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True)
    return done.stdout if done.returncode == 0 else None


def _inputs_from_tree(tree: Path, key: str) -> tuple[list[str], str | None]:
    """The tree paths a render of ``key`` reads (the master config first), or why none."""
    from syncer.errors import SyncError
    from syncer.inferencex.discovery import files_read
    from syncer.inferencex.master import load_master
    from syncer.inferencex.scripts import script_launch

    try:
        master = load_master(tree)
        if key not in master.data:
            return [], "key not in the master config at that commit"
        if script_launch(master, key) is not None:
            return [], "launched by a bash script (no srt-slurm recipe to render)"
        master.entry(key)
    except SyncError as exc:
        return [], f"refused: {exc.message}"
    masters = [Path(os.path.relpath(f, tree)).as_posix() for f in master.files]
    found = sorted(p for p in files_read(master, key) if (tree / p).is_file())
    return [*masters, *(p for p in found if p not in masters)], None


def build(reference: Path, git_dirs: list[Path]) -> dict:
    """The manifest: module versions, and per (commit, key) the files read or the reason."""
    from syncer.cookbook.jsmodule import load_module
    from syncer.inferencex import commits

    files: dict[tuple[str, str, str], dict] = {}
    modules, inputs = [], {}
    for model, short, copy in _module_copies(reference):
        data = copy.read_bytes()
        entry = _entry(SGLANG, f"{AGENTX}/{model}.jsx", MODULE_COMMITS[short], data)
        modules.append({**entry, "model": model})
        for _, sha, key in cell_inputs(load_module(copy).value):
            if f"{sha} {key}" in inputs:
                continue
            paths, why = [], None
            copies = reference / "pairs" / "inferencex" / sha[:8]
            git_dir = next((g for g in git_dirs if commits.has_commit(g, sha)), None)
            if sha in STAND_INS:
                why = STAND_INS[sha]
            elif git_dir is not None:
                with commits.tree_at(git_dir, sha) as tree:
                    paths, why = _inputs_from_tree(tree, key)
                    for p in paths:
                        files[(INFERENCEX, p, sha)] = _entry(
                            INFERENCEX, p, sha, (tree / p).read_bytes()
                        )
            elif copies.is_dir():
                paths, why = _inputs_from_tree(copies, key)
                for p in paths:
                    files[(INFERENCEX, p, sha)] = _entry(
                        INFERENCEX, p, sha, (copies / p).read_bytes()
                    )
            else:
                why = "commit not public in the store (a pull request's head)"
            inputs[f"{sha} {key}"] = {"files": paths} if why is None else {"absent": why}
    return {
        "modules": modules,
        "stored_versions": STORED_VERSIONS,
        "inputs": dict(sorted(inputs.items())),
        "files": [files[k] for k in sorted(files)],
    }


def _bytes_of(entry: dict, reference: Path, git_dirs: list[Path]) -> bytes | None:
    if entry["repo"] == SGLANG:
        model = entry["path"].removeprefix(f"{AGENTX}/").removesuffix(".jsx")
        for folder in ("agentx", "agentx-more"):
            copy = reference / "cookbook" / folder / model / f"{entry['commit'][:8]}.jsx"
            if copy.is_file():
                return copy.read_bytes()
        return None
    for git_dir in git_dirs:
        data = _git(git_dir, "cat-file", "blob", f"{entry['commit']}:{entry['path']}")
        if data is not None:
            return data
    copy = reference / "pairs" / "inferencex" / entry["commit"][:8] / entry["path"]
    return copy.read_bytes() if copy.is_file() else None


def fill(manifest: dict, reference: Path, git_dirs: list[Path], root: Path) -> list[str]:
    """Every file of the manifest into the cache, checked; the entries no source held."""
    missing = []
    for entry in [*manifest["modules"], *manifest["files"]]:
        target = cached(entry, root)
        data = _bytes_of(entry, reference, git_dirs)
        ok = data is not None and _entry("", "", "", data)["sha256"] == entry["sha256"]
        if not ok or data is None or len(data) != entry["length"]:
            missing.append(f"{entry['repo']}@{entry['commit'][:8]}:{entry['path']}")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return missing


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["build", "fill"])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--git-dir", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    if args.action == "build":
        manifest = build(args.reference, args.git_dir)
        MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
        print(f"{MANIFEST}: {len(manifest['modules'])} modules, {len(manifest['files'])} files")
        return 0
    manifest = json.loads(MANIFEST.read_text())
    missing = fill(manifest, args.reference, args.git_dir, cache_dir())
    for name in missing:
        print(f"absent from every source: {name}", file=sys.stderr)
    print(
        f"{cache_dir()}: {len(manifest['modules']) + len(manifest['files']) - len(missing)} files"
    )
    return 1 if missing else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main(sys.argv[1:]))
