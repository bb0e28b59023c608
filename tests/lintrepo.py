"""A small SGLang-shaped git repository for the lint tests and benchmark: two versions of
``server_args.py`` in SGLang's styles (a flag renamed, one removed, one added) and the router's
argument file, which moves between them as it did upstream."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

# Version 1 (tag v0.5.1): hand-written add_argument calls, a loop over a list, a helper for a
# deprecated alias; the router's arguments under sgl-router/py_src.
SERVER_ARGS_V1 = """\
import argparse
import dataclasses

LEGACY_FLAGS = ["--enable-legacy-a", "--enable-legacy-b"]


def _deprecated_alias(parser, old, new):
    parser.add_argument(old, dest=new.lstrip("-").replace("-", "_"), help=f"Use {new}.")


@dataclasses.dataclass
class ServerArgs:
    model_path: str = ""
    tp_size: int = 1

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", "--model", type=str)
        parser.add_argument("--host", type=str)
        parser.add_argument("--port", type=int)
        parser.add_argument("--tensor-parallel-size", "--tp-size", type=int)
        parser.add_argument("--mem-fraction-static", type=float)
        parser.add_argument("--enable-dp-attention", action="store_true")
        parser.add_argument("--enable-hierarchical-cache", action="store_true")
        parser.add_argument("--hicache-ratio", type=float)
        parser.add_argument("--kv-events-config", type=str)
        parser.add_argument("--enable-torch-compile", action="store_true")
        parser.add_argument("--max-running-requests", type=int)
        for flag in LEGACY_FLAGS:
            parser.add_argument(flag, action="store_true")
        _deprecated_alias(parser, "--enable-ep-moe", "--ep-size")
"""

# Version 2: `--max-running-requests` renamed `--max-running-reqs`, `--enable-torch-compile`
# removed, `--enable-two-batch-overlap` added; most flags now come from dataclass fields;
# `--enable-ep-moe` retired and `--mem-fraction` kept as a deprecated alias.
SERVER_ARGS_V2 = """\
import argparse
import dataclasses
from sglang.srt.arg_groups.arg_utils import A, Arg, add_cli_args_from_dataclass


@dataclasses.dataclass
class ServerArgs:
    model_path: A[str, Arg(help="Model weights.", aliases=["--model"])]
    host: A[str, "The host."] = "127.0.0.1"
    port: A[int, "The port."] = 30000
    tp_size: A[int, Arg(help="TP.", cli_name="--tensor-parallel-size", aliases=["--tp-size"])] = 1
    mem_fraction_static: A[float, "Memory fraction."] = 0.9
    enable_dp_attention: A[bool, "DP attention."] = False
    enable_hierarchical_cache: A[bool, "HiCache."] = False
    hicache_ratio: A[float, "HiCache ratio."] = 2.0
    kv_events_config: A[str, "KV events."] = ""
    max_running_reqs: A[int, "Max running requests."] = 0
    enable_two_batch_overlap: A[bool, "TBO."] = False
    internal_state: A[int, Arg(help="not a flag", no_cli=True)] = 0

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        add_cli_args_from_dataclass(parser, ServerArgs)
        parser.add_argument(
            "--enable-ep-moe", action=DeprecatedAction, error_message="Use --ep-size instead."
        )
        parser.add_argument(
            "--mem-fraction",
            dest="mem_fraction_static",
            action=DeprecatedAliasStoreAction,
            new_flag="--mem-fraction-static",
        )
"""

ROUTER_ARGS = """\
import argparse


class RouterArgs:
    @staticmethod
    def add_cli_args(parser, use_router_prefix=False, exclude_host_port=False):
        prefix = "router-" if use_router_prefix else ""
        group = parser.add_argument_group("routing")
        if not exclude_host_port:
            group.add_argument("--host", type=str)
            group.add_argument("--port", type=int)
        group.add_argument("--worker-urls", nargs="*")
        group.add_argument(f"--{prefix}policy", type=str)
        group.add_argument(f"--{prefix}pd-disaggregation", action="store_true")
        group.add_argument(f"--{prefix}prefill", nargs="+", action="append")
        group.add_argument(f"--{prefix}decode", nargs=1, action="append")
"""


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo),
    }
    out = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def commit_files(repo: Path, files: dict[str, str | None], message: str) -> str:
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            git(repo, "rm", "-q", rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_sglang_repo(root: Path) -> dict[str, str]:
    """The repository at ``root``: v1 tagged ``v0.5.1``, v2 on top; returns both commits."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    v1 = commit_files(
        root,
        {
            "python/sglang/srt/server_args.py": SERVER_ARGS_V1,
            "sgl-router/py_src/sglang_router/router_args.py": ROUTER_ARGS,
        },
        "v1",
    )
    git(root, "tag", "v0.5.1")
    v2 = commit_files(
        root,
        {
            "python/sglang/srt/server_args.py": SERVER_ARGS_V2,
            "sgl-router/py_src/sglang_router/router_args.py": None,
            "sgl-model-gateway/bindings/python/src/sglang_router/router_args.py": ROUTER_ARGS,
        },
        "v2",
    )
    return {"v1": v1, "v2": v2}


def _worker(cmd: str, args: list[list[str]], role: str = "agg") -> dict[str, Any]:
    return {"kind": "worker", "role": role, "workers": 1, "cmd": cmd, "env": {}, "args": args}


def _router() -> dict[str, Any]:
    return {
        "kind": "sglang-router",
        "count": 1,
        "cmd": "python3 -m sglang_router.launch_router",
        "env": {},
        "args": [["--host", "0.0.0.0"], ["--port", "8000"], ["--policy", "round_robin"]],
    }


def _cell(cid: str, image: str, commit: str | None, extra: list[list[str]]) -> dict[str, Any]:
    args = [
        ["--model-path", "org/model"],
        ["--host", "0.0.0.0"],
        ["--port", "30000"],
        ["--mem-fraction-static", "0.8"],
        ["--tensor-parallel-size", "4"],
        *extra,
    ]
    dyn_args = [*args, ["--request-plane", "nats"], ["--dyn-tool-call-parser", "hermes"]]
    return {
        "id": cid,
        "hw": "gb300",
        "ckpt": "org/model",
        "label": "Agg TP4",
        "image": image,
        "imageStatus": "ok",
        "imageCommit": commit,
        "submitted": "sglang",
        "kv": {
            "available": ["none", "hicache"],
            "unavailable": {},
            "hicache": {"args": [["--enable-hierarchical-cache"], ["--hicache-ratio", "2"]]},
        },
        "prov": {"status": "verified"},
        "points": [
            {"concs": [1], "kv": "none"},
            {
                "concs": [8],
                "kv": "none",
                "patch": {"sglang": [{"args": {"--max-running-requests": ["8"]}}, None]},
            },
        ],
        "routers": {
            "sglang": {"blocks": [_worker("python3 -m sglang.launch_server", args), _router()]},
            "dynamo": {"blocks": [_worker("python3 -m dynamo.sglang", dyn_args)]},
        },
    }


def module_text(cells: list[dict[str, Any]]) -> str:
    data = {
        "model": "Model",
        "generatedOn": "2026-10-01",
        "hardware": [{"id": "gb300", "label": "GB300"}],
        "checkpoints": [{"id": "org/model"}],
        "cells": cells,
    }
    return "export const agentx = " + json.dumps(data, indent=1) + ";\n"


def fixture_module(commits: dict[str, str]) -> str:
    """Cells pinned to v1 by tag, to v2 by short commit, to a pruned tag, to nothing."""
    return module_text(
        [
            _cell(
                "c-v1#0",
                "lmsysorg/sglang:v0.5.1-cu130",
                None,
                [["--enable-torch-compile"], ["--enable-two-batch-overlap"]],
            ),
            _cell(
                "c-v2#0",
                f"lmsysorg/sglang:nightly-dev-20261001-{commits['v2'][:8]}",
                commits["v2"][:8],
                [
                    ["--enable-torch-compile"],
                    ["--enable-two-batch-overlap"],
                    ["--enable-ep-moe"],
                    ["--mem-fraction", "0.8"],
                ],
            ),
            _cell("c-pruned#0", "lmsysorg/sglang:v0.4.9-cu126", None, []),
            _cell("c-none#0", "lmsysorg/sglang:dev-cu13-nightly-0924", None, []),
        ]
    )
