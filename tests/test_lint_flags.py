"""The static flag collector (syncer.lint.flags): each declaration style SGLang used, and what
it must report as unresolved instead of guessing."""

from __future__ import annotations

import pytest

from syncer.errors import SyncError
from syncer.lint.flags import collect_flags


def flags_of(source: str, **kwargs: object) -> tuple[set[str], list[str]]:
    found = collect_flags(source, "server_args.py", **kwargs)  # type: ignore[arg-type]
    return set(found.flags), found.dynamic


def test_direct_calls_aliases_groups_and_store_true() -> None:
    flags, dynamic = flags_of(
        """
def add_cli_args(parser):
    parser.add_argument("--model-path", "--model", type=str)
    group = parser.add_argument_group("x")
    group.add_argument("--trust-remote-code", action="store_true")
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument("positional")
"""
    )
    assert flags == {"--model-path", "--model", "--trust-remote-code", "-q", "--quiet"}
    assert dynamic == []


def test_loops_over_literal_lists_and_module_constants() -> None:
    flags, dynamic = flags_of(
        """
NAMES = ["--a", "--b"]
PAIRS = (("--c", "help c"), ("--d", "help d"))
def add(parser):
    for name in NAMES:
        parser.add_argument(name)
    for flag, text in PAIRS:
        parser.add_argument(flag, help=text)
    for suffix in ("x", "y"):
        parser.add_argument(f"--enable-{suffix}", action="store_true")
"""
    )
    assert flags == {"--a", "--b", "--c", "--d", "--enable-x", "--enable-y"}
    assert dynamic == []


def test_loops_over_dict_literals() -> None:
    # Deprecated flags kept as a mapping old -> new, registered in one loop.
    flags, dynamic = flags_of(
        """
DEPRECATED = {"--enable-ep-moe": "--ep-size", "--enable-deepep-moe": "--moe-a2a-backend"}
RENAMED = {"--old-a": "--new-a"}
def add(parser):
    for old, new in DEPRECATED.items():
        parser.add_argument(old, help=f"Deprecated: use {new}.")
    for old in sorted(RENAMED):
        parser.add_argument(old)
    for new in RENAMED.values():
        parser.add_argument(new)
    for name in {"--x": 1}.keys():
        parser.add_argument(name)
"""
    )
    assert flags == {"--enable-ep-moe", "--enable-deepep-moe", "--old-a", "--new-a", "--x"}
    assert dynamic == []


def test_helper_calls_bind_their_arguments() -> None:
    # A deprecated-alias helper: its option string is a parameter, known at each call site.
    flags, dynamic = flags_of(
        """
def _deprecated(parser, old, new):
    parser.add_argument(old, help=f"use {new}")

def add(parser):
    _deprecated(parser, "--enable-ep-moe", "--ep-size")
    _deprecated(parser, new="--dp-size", old="--enable-dp")
"""
    )
    assert flags == {"--enable-ep-moe", "--enable-dp"}
    assert dynamic == []


def test_prefix_from_a_parameter_default_and_replace() -> None:
    flags, dynamic = flags_of(
        """
class RouterArgs:
    @staticmethod
    def add_cli_args(parser, use_router_prefix=False):
        prefix = "router-" if use_router_prefix else ""
        parser.add_argument(f"--{prefix}policy")
        parser.add_argument("--" + "cache_threshold".replace("_", "-"))
"""
    )
    assert flags == {"--policy", "--cache-threshold"}
    assert dynamic == []


def test_boolean_optional_action_declares_the_negation() -> None:
    flags, _ = flags_of(
        """
import argparse
def add(parser):
    parser.add_argument("--overlap", action=argparse.BooleanOptionalAction)
"""
    )
    assert flags == {"--overlap", "--no-overlap"}


def test_dataclass_fields() -> None:
    flags, dynamic = flags_of(
        """
import argparse
from dataclasses import dataclass
from sglang.srt.arg_groups.arg_utils import A, Arg, add_cli_args_from_dataclass

@dataclass
class Base:
    host: A[str, "host"] = "0.0.0.0"

@dataclass
class ServerArgs(Base):
    model_path: A[str, Arg(help="m", aliases=["--model"])]
    tp_size: A[int, Arg(help="tp", cli_name="--tensor-parallel-size", aliases=["--tp"])] = 1
    internal: A[int, Arg(help="i", no_cli=True)] = 0
    plain: int = 0
    overlap: A[bool, Arg(help="o", action=argparse.BooleanOptionalAction)] = True
    quoted: "A[bool, 'q']" = False

    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)
"""
    )
    assert flags == {
        "--host",
        "--model-path",
        "--model",
        "--tensor-parallel-size",
        "--tp",
        "--overlap",
        "--no-overlap",
        "--quoted",
    }
    assert dynamic == []


def test_dataclass_fields_only_for_the_named_fields() -> None:
    flags, _ = flags_of(
        """
class S:
    a: A[int, "a"] = 0
    b: A[int, "b"] = 0
def add(parser):
    add_cli_args_from_dataclass(parser, S, fields=["b"])
"""
    )
    assert flags == {"--b"}


def test_fields_of_imported_classes_are_read_from_the_same_source() -> None:
    source = """
from sglang.srt.arg_groups.fields.exec_ import Exec
from sglang.srt.arg_groups.arg_utils import add_cli_args_from_dataclass
class ServerArgs(Exec):
    port: A[int, "port"] = 1
def add(parser):
    add_cli_args_from_dataclass(parser, ServerArgs)
"""
    modules = {"sglang.srt.arg_groups.fields.exec_": "class Exec:\n    tp_size: A[int, 't'] = 1\n"}
    found = collect_flags(source, "server_args.py", modules=modules.get)
    assert set(found.flags) == {"--port", "--tp-size"}
    assert found.complete and found.extra_sources == ["sglang.srt.arg_groups.fields.exec_"]
    # Without the module the base class's fields are unknown: said, not guessed.
    missing = collect_flags(source, "server_args.py")
    assert set(missing.flags) == {"--port"}
    assert not missing.complete
    assert "sglang.srt.arg_groups.fields.exec_.Exec" in missing.dynamic[0]


def test_classes_reached_through_imported_modules() -> None:
    source = """
from sglang.srt.arg_groups import fields
import sglang.srt.arg_groups.fields.spec as spec
class ServerArgs(fields.Parallel, spec.Spec):
    port: A[int, "port"] = 1
def add(parser):
    add_cli_args_from_dataclass(parser, ServerArgs)
    add_cli_args_from_dataclass(parser, spec.Extra)
"""
    modules = {
        "sglang.srt.arg_groups.fields": "class Parallel:\n    dp_size: A[int, 'dp'] = 1\n",
        "sglang.srt.arg_groups.fields.spec": (
            "class Spec:\n    speculative_algorithm: A[str, 's'] = ''\n"
            "class Extra:\n    draft: A[str, 'd'] = ''\n"
        ),
    }
    found = collect_flags(source, "server_args.py", modules=modules.get)
    assert set(found.flags) == {"--port", "--dp-size", "--speculative-algorithm", "--draft"}
    assert found.complete


def test_fields_rebuilt_from_namespace_classes_at_run_time() -> None:
    # The newest style: ServerArgs's annotations are merged from namespace classes after the
    # class body, and the class is rebuilt as a struct. Their fields are read, and the file is
    # marked incomplete because the merge itself is code.
    source = """
import msgspec
from sglang.srt.arg_groups.fields.model import Model
from sglang.srt.arg_groups.fields.parallel import Parallel
from sglang.srt.arg_groups.arg_utils import A, add_cli_args_from_dataclass, collect_input_fields

class ServerArgs:
    port: A[int, "port"] = 1

    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)

_INPUT_NAMESPACES = [Model, Parallel]
_annotations, _defaults, _ns = collect_input_fields(_INPUT_NAMESPACES)
ServerArgs.__annotations__ = {**_annotations, **ServerArgs.__annotations__}
ServerArgs = msgspec.defstruct("ServerArgs", list(ServerArgs.__annotations__.items()))
"""
    modules = {
        "sglang.srt.arg_groups.fields.model": (
            "import msgspec\nclass Model(msgspec.Struct):\n"
            "    model_path: A[str, Arg(help='m', aliases=['--model'])] = ''\n"
        ),
        "sglang.srt.arg_groups.fields.parallel": (
            "class Parallel:\n    tp_size: A[int, Arg(help='t', aliases=['--tp'])] = 1\n"
        ),
    }
    found = collect_flags(source, "server_args.py", modules=modules.get)
    assert set(found.flags) == {"--port", "--model-path", "--model", "--tp-size", "--tp"}
    assert [d.split(": ", 1)[1] for d in found.dynamic] == [
        "ServerArgs's fields are rebuilt at run time; fields of Model, Parallel read",
        "ServerArgs's fields are rebuilt at run time",
    ]
    assert not found.complete


def test_unresolvable_declarations_are_reported_with_their_line() -> None:
    flags, dynamic = flags_of(
        """
import dataclasses
def add(parser, extra):
    parser.add_argument("--known")
    for field in dataclasses.fields(ServerArgs):
        parser.add_argument("--" + field.name.replace("_", "-"))
    parser.add_argument(compute_name())
"""
    )
    assert flags == {"--known"}
    assert [d.split(":")[0] for d in dynamic] == ["line 6", "line 7"]


def test_a_parameter_only_call_sites_know_is_not_a_gap_when_called() -> None:
    # Standalone, `name` is unknown; the call below pins it, so nothing is unresolved.
    flags, dynamic = flags_of(
        """
def helper(parser, name):
    parser.add_argument(name)
def add(parser):
    helper(parser, "--x")
"""
    )
    assert flags == {"--x"} and dynamic == []
    # Never called in the file: its flag cannot be known.
    _, dynamic = flags_of("def helper(parser, name):\n    parser.add_argument(name)\n")
    assert dynamic == ["line 2: an option string the file does not pin down"]


def test_invalid_python_is_bad_input_with_its_line() -> None:
    with pytest.raises(SyncError) as err:
        collect_flags("def f(:\n", "x/server_args.py")
    assert err.value.path == "x/server_args.py" and err.value.line == 1


def test_deprecated_actions_are_recorded_with_their_replacement() -> None:
    found = collect_flags(
        """
from sglang.srt.arg_groups.argparse_actions import DeprecatedAction, DeprecatedAliasStoreAction
class S:
    old_tbo: A[bool, Arg(help="x", action=DeprecatedStoreTrueAction,
                         action_kwargs={"new_flag": "--enable-two-batch-overlap"})] = False
def add(parser):
    add_cli_args_from_dataclass(parser, S)
    parser.add_argument("--enable-ep-moe", action=DeprecatedAction, error_message="gone")
    parser.add_argument("--nsa-backend", action=DeprecatedAliasStoreAction, new_flag="--dsa")
    parser.add_argument("--both", action=DeprecatedAction)
    parser.add_argument("--both", action="store_true")
""",
        "server_args.py",
    )
    assert set(found.flags) == {"--old-tbo", "--enable-ep-moe", "--nsa-backend", "--both"}
    deprecated = {k: (d.action, d.new_flag, d.stops) for k, d in found.deprecated.items()}
    # A flag also declared by an ordinary action elsewhere is not deprecated.
    assert deprecated == {
        "--old-tbo": ("DeprecatedStoreTrueAction", "--enable-two-batch-overlap", False),
        "--enable-ep-moe": ("DeprecatedAction", None, True),
        "--nsa-backend": ("DeprecatedAliasStoreAction", "--dsa", False),
    }
