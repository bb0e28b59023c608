"""The static flag collector (syncer.lint.declared_flags): each declaration style SGLang used,
and what it must report as unresolved instead of guessing."""

from __future__ import annotations

import pytest

from syncer.errors import SyncError
from syncer.lint.declared_flags import collect_flags


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


def test_if_statements_the_file_decides_take_one_branch() -> None:
    # The gateway's RouterArgs declares a flag only for the prefixed (server-side) parser;
    # `launch_router` builds the unprefixed one, which never has it.
    flags, dynamic = flags_of(
        """
STRICT = False
class RouterArgs:
    @staticmethod
    def add_cli_args(parser, use_router_prefix=False, exclude_host_port=False, extra=None):
        if use_router_prefix:
            parser.add_argument("--router-no-fallback", action="store_true")
        else:
            parser.add_argument("--plain-only")
        if not exclude_host_port:
            parser.add_argument("--host")
        if STRICT:
            parser.add_argument("--strict")
        if extra:
            parser.add_argument("--extra")
        elif use_router_prefix:
            parser.add_argument("--never")
        if envs.FEATURE.get():
            parser.add_argument("--feature")
"""
    )
    # `extra` has a constant default (None), so its branch is decided too; `envs...get()`
    # is not, and both of its branches count.
    assert flags == {"--plain-only", "--host", "--feature"}
    assert dynamic == []


def test_if_statements_in_a_helper_follow_each_call_site() -> None:
    flags, _ = flags_of(
        """
def _router_flags(parser, prefixed):
    if prefixed:
        parser.add_argument("--router-policy")
    else:
        parser.add_argument("--policy")

def add_cli_args(parser):
    _router_flags(parser, prefixed=True)
"""
    )
    # The helper's own walk leaves `prefixed` to its call sites; the one call takes one branch.
    assert flags == {"--router-policy"}


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
    # The merging helper cannot be read (arg_utils is not supplied), so what the merge adds is
    # not proven; the struct rebuilt from the class's own annotations adds nothing.
    assert [d.split(": ", 1)[1] for d in found.dynamic] == [
        "ServerArgs's fields are rebuilt at run time; fields of Model, Parallel read",
    ]
    assert not found.complete


# The namespace merge as server_args.py composes it from 2026 on: a list of namespace classes,
# a helper in the fields package that walks each class's fields, the class's annotations merged
# with the helper's first result, and the class rebuilt as a struct from its own annotations.
MERGED = """
import msgspec
from pkg.fields import collect, Model
from pkg.parallel import Parallel

class ServerArgs:
    port: A[int, "port"] = 1

    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)

NAMESPACES = [Model, Parallel]
_ann, _defaults = collect(NAMESPACES)
ServerArgs.__annotations__ = {**_ann, **ServerArgs.__annotations__}
ServerArgs = msgspec.defstruct(
    "ServerArgs",
    [
        (n, a, _defaults[n]) if n in _defaults else (n, a)
        for n, a in ServerArgs.__annotations__.items()
    ],
)
"""
FIELDS_PKG = """
import msgspec
def collect(sources):
    out, defaults = {}, {}
    for source in sources:
        for f in msgspec.structs.fields(source):
            out[f.name] = f.type
    return out, defaults

class Model:
    model_path: A[str, Arg(help="m", aliases=["--model"])] = ""
"""
PARALLEL = "class Parallel:\n    tp_size: A[int, 't'] = 1\n"


def test_a_merge_through_a_field_collecting_helper_is_proven() -> None:
    modules = {"pkg.fields": FIELDS_PKG, "pkg.parallel": PARALLEL}
    found = collect_flags(MERGED, "server_args.py", modules=modules.get)
    assert set(found.flags) == {"--port", "--model-path", "--model", "--tp-size"}
    assert found.dynamic == [] and found.complete
    assert found.extra_sources == ["pkg.fields", "pkg.parallel"]


@pytest.mark.parametrize(
    ("modules", "source", "noted"),
    [
        # The helper does something else with its classes: the merge is not proven.
        (
            {
                "pkg.fields": FIELDS_PKG.replace("msgspec.structs.fields(source)", "extra()"),
                "pkg.parallel": PARALLEL,
            },
            MERGED,
            [15],
        ),
        # One class of the list cannot be read.
        ({"pkg.fields": FIELDS_PKG}, MERGED, [15]),
        # The struct is built from more than the class's annotations.
        (
            {"pkg.fields": FIELDS_PKG, "pkg.parallel": PARALLEL},
            MERGED.replace(
                "for n, a in ServerArgs.__annotations__.items()", "for n, a in EXTRA.items()"
            ),
            [16],
        ),
        # The merge adds something besides the helper's result and the class's own fields.
        (
            {"pkg.fields": FIELDS_PKG, "pkg.parallel": PARALLEL},
            MERGED.replace("{**_ann, **", "{**_ann, **OTHER, **"),
            [15],
        ),
    ],
)
def test_a_merge_that_is_not_of_the_known_shape_stays_unresolved(
    modules: dict[str, str], source: str, noted: list[int]
) -> None:
    found = collect_flags(source, "server_args.py", modules=modules.get)
    assert [int(d.split(":")[0].removeprefix("line ")) for d in found.dynamic] == noted
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


# A retired flag's action, in the three shapes it had: raise on every use (the class in
# server_args.py itself), only warn, and stop only when declared with an error message (the
# class in the argparse_actions module).
RAISES = """
class DeprecatedAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        raise ValueError(self.help)
"""
WARNS = """
class DeprecatedAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        print_deprecated_warning(f"{option_string} is deprecated")
"""
ON_MESSAGE = """
class DeprecatedAction(argparse.Action):
    def __init__(self, option_strings, dest, error_message=None, nargs=0, **kwargs):
        self.error_message = error_message
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if self.error_message is not None:
            parser.error(self.error_message)
        print_deprecated_warning(f"{option_string} is deprecated")
"""
RETIRING = """
def add(parser):
    parser.add_argument("--plain", action=DeprecatedAction, help="gone")
    parser.add_argument("--told", action=DeprecatedAction, error_message="use --new")
"""
IMPORTED = "from sglang.srt.arg_groups.argparse_actions import DeprecatedAction\n"


@pytest.mark.parametrize(
    ("source", "actions", "plain", "told"),
    [
        (RAISES + RETIRING, None, True, True),
        (IMPORTED + RETIRING, WARNS, False, False),
        (IMPORTED + RETIRING, ON_MESSAGE, False, True),
        # An inverted test is not the shape whose outcome is known.
        (IMPORTED + RETIRING, ON_MESSAGE.replace("is not None", "is None"), None, True),
        # The action cannot be read: only a declared error message is known to stop.
        (IMPORTED + RETIRING, None, None, True),
    ],
)
def test_whether_a_retired_flag_stops_follows_its_action(
    source: str, actions: str | None, plain: bool | None, told: bool | None
) -> None:
    modules = {"sglang.srt.arg_groups.argparse_actions": actions}
    found = collect_flags(source, "server_args.py", modules=modules.get)
    assert {k: d.stops for k, d in found.deprecated.items()} == {"--plain": plain, "--told": told}
    described = found.deprecated["--plain"].describe()
    expected = {
        True: "stops the server",
        False: "accepted with a warning, ignored",
        None: "may stop the server",
    }[plain]
    assert expected in described
