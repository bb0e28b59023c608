"""JavaScript value semantics (jsvalues): Number::toString, key order, ``__proto__`` in an
object literal, the page's view of a module. Deterministic cases here; the same functions are
compared with node's own ``String(x)`` and ``Object.keys`` over many seeded random values
when node is installed."""

from __future__ import annotations

import json
import math
import random
import shutil
import struct
import subprocess

import pytest

from syncer.cookbook.jsmodule import parse_module
from syncer.cookbook.jsvalues import (
    UNDEFINED,
    NotADouble,
    ProtoError,
    js_number,
    js_string,
    object_literal,
    page_view,
    property_order,
    sorted_object,
)
from syncer.errors import SyncError


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (10**21, "1e+21"),
        (10**21 - 1, "1e+21"),  # rounds to the double 1e21
        (999999999999999900000, "999999999999999900000"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),  # rounded, ties to even
        (2**53 + 3, "9007199254740996"),
        (-(2**53) - 1, "-9007199254740992"),
        (2**60, "1152921504606847000"),  # shortest digits, then zeros (not 976)
        (123456789012345683968, "123456789012345680000"),
        (float(2**60), "1152921504606847000"),
        (1e20, "100000000000000000000"),
        (1e16, "10000000000000000"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.25e-7, "1.25e-7"),
        (-0.0, "0"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (10**400, "Infinity"),
        (-(10**400), "-Infinity"),
        (0.1 + 0.2, "0.30000000000000004"),
    ],
)
def test_numbers_are_written_as_number_to_string(value: int | float, expected: str) -> None:
    assert js_number(value) == expected


def test_string_of_the_values_a_block_can_hold() -> None:
    assert js_string(UNDEFINED) == "undefined"
    assert js_string(None) == "null"
    assert js_string({"a": 1}) == "[object Object]"
    assert js_string([1, None, [2, UNDEFINED], "x"]) == "1,,2,,x"
    assert js_string(True) == "true"


def test_array_indices_come_first_in_ascending_order() -> None:
    keys = ["b", "10", "2", "4294967294", "4294967295", "01", "-1", "1.0", "0", "a"]
    assert property_order(keys) == [
        "0", "2", "10", "4294967294", "b", "4294967295", "01", "-1", "1.0", "a"
    ]  # fmt: skip


def test_sorted_object_sorts_by_utf16_units_and_lists_indices_first() -> None:
    # U+1F600 is a surrogate pair (D83D DE00): before U+FF21 in UTF-16, after it by code point.
    obj = {"\uff21": 1, "\U0001f600": 2, "B": 3, "10": 4, "9": 5}
    assert list(sorted_object(obj)) == ["9", "10", "B", "\U0001f600", "\uff21"]


def test_proto_is_no_property_and_twice_is_an_error() -> None:
    assert object_literal([("a", 1), ("__proto__", "x"), ("b", 2)]) == {"a": 1, "b": 2}
    assert object_literal([("__proto__", None), ("a", 1)]) == {"a": 1}
    assert object_literal([("a", 1), ("b", 2), ("a", 3)]) == {"a": 3, "b": 2}
    with pytest.raises(ProtoError) as twice:
        object_literal([("__proto__", 1), ("a", 1), ("__proto__", 2)])
    assert twice.value.index == 2 and "SyntaxError" in str(twice.value)
    with pytest.raises(ProtoError) as prototype:
        object_literal([("a", 1), ("__proto__", {"cmd": "x"})])
    assert prototype.value.index == 1


@pytest.mark.parametrize(
    "literal",
    [
        '{"__proto__": 1, "a": {"__proto__": "x", "b": 2}}',  # the JSON reader
        '{__proto__: 1, a: {"__proto__": "x", b: 2,},}',  # esprima's
        '{"\\u005f_proto__": 1, "a": {"__pro\\u0074o__": "x", "b": 2}}',  # spelled with escapes
    ],
)
def test_both_readers_drop_proto(literal: str) -> None:
    module = parse_module(f"export const agentx = {literal};\n")
    assert module.value == {"a": {"b": 2}}


@pytest.mark.parametrize("quoted", ['"__proto__"', "__proto__", '"__pro\\u0074o__"'])
def test_a_second_proto_is_refused_by_line(quoted: str) -> None:
    text = f'export const agentx = {{\n "__proto__": 1,\n {quoted}: 2\n}};\n'
    with pytest.raises(SyncError) as exc:
        parse_module(text, "m.jsx")
    assert exc.value.line == 3 and "__proto__" in exc.value.message


def test_the_page_view_orders_keys_and_holds_doubles() -> None:
    data = {"b": [1, 2**53 + 1, 1.0, 0.5, 2**60, 10**21], "10": {"z": 1, "3": 2}, "a": "x"}
    view = page_view(data)
    assert list(view) == ["10", "b", "a"] and list(view["10"]) == ["3", "z"]
    assert view["b"] == [1, 2**53, 1, 0.5, 1152921504606847000, 1e21]
    assert [type(n) for n in view["b"]] == [int, int, int, float, int, float]
    # so JSON writes each as JSON.stringify does
    assert json.dumps(view["b"]) == "[1, 9007199254740992, 1, 0.5, 1152921504606847000, 1e+21]"
    assert list(data) == ["b", "10", "a"] and data["b"][1] == 2**53 + 1  # left as parsed
    plain = {"a": [1, "x"], "b": {"c": True}}
    assert page_view(plain) is plain  # nothing to change: the same objects
    with pytest.raises(NotADouble) as exc:
        page_view({"a": [{"b": 1}, {"c": [10**400]}]})
    assert exc.value.path == ("a", 1, "c", 0)


# ---- against node ---------------------------------------------------------------------------

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")

# Reads [numbers as literal texts, key lists] on stdin; writes String(Number(text)) of each,
# Object.keys of an object whose keys were set in each list's order, and the page's sortedObj.
_NODE_SCRIPT = r"""
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const sortedObj = (o) => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
const orders = input.keys.map((keys) => {
  const o = {};
  keys.forEach((k, i) => { o[k] = i; });
  return [Object.keys(o), Object.keys(sortedObj(o))];
});
const numbers = input.numbers.map((t) => String(Number(t)));
process.stdout.write(JSON.stringify({ numbers, orders }));
"""


def _random_numbers(rng: random.Random) -> list[int | float]:
    numbers: list[int | float] = []
    for _ in range(4000):  # any double: random bits
        (value,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(value):
            numbers.append(value)
    for _ in range(2000):  # decimals of every magnitude, near the thresholds above all
        decimal = round(rng.uniform(-10, 10), rng.randint(0, 17))
        numbers.append(decimal * 10.0 ** rng.randint(-30, 30))
    for _ in range(2000):  # integers around 2**53 and 1e21, and beyond
        numbers.append(rng.choice([1, -1]) * rng.randint(0, 10 ** rng.randint(1, 30)))
        numbers.append(2**53 + rng.randint(-5, 5) * rng.choice([1, 2 ** rng.randint(0, 20)]))
    return numbers


def _random_keys(rng: random.Random) -> list[list[str]]:
    pool = ["0", "1", "2", "10", "01", "-1", "1.5", "1e3", "4294967294", "4294967295",
            "9007199254740993", "a", "B", "__x", "\uff21", "\U0001f600", "é", "", " 1"]  # fmt: skip
    lists = []
    for _ in range(500):
        keys = [rng.choice(pool) if rng.random() < 0.6 else str(rng.randint(0, 5000))
                for _ in range(rng.randint(0, 12))]  # fmt: skip
        lists.append(list(dict.fromkeys(keys)))
    return lists


@needs_node
@pytest.mark.parametrize("seed", [1, 2])
def test_numbers_and_key_order_equal_nodes(seed: int) -> None:
    rng = random.Random(seed)
    numbers = _random_numbers(rng)
    keys = _random_keys(rng)
    texts = [repr(n) if isinstance(n, float) else str(n) for n in numbers]
    proc = subprocess.run(
        [str(NODE), "-e", _NODE_SCRIPT],
        input=json.dumps({"numbers": texts, "keys": keys}),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    node = json.loads(proc.stdout)
    ours = [js_number(n) for n in numbers]
    wrong = [(t, o, n) for t, o, n in zip(texts, ours, node["numbers"], strict=True) if o != n]
    assert not wrong, wrong[:10]
    for given, (keys_order, sorted_order) in zip(keys, node["orders"], strict=True):
        assert property_order(given) == keys_order, given
        assert list(sorted_object(dict.fromkeys(given))) == sorted_order, given


def test_raw_line_separators_in_strings_are_read_and_no_escape_is_changed() -> None:
    # Off the generator's layout (esprima, ES5, refused them); the stand-ins it is given
    # are never characters a string of the module spells with an escape.
    text = (
        "export const a = {\r\n"
        ' b: "x\u2028y", c: "\\ue000", d: "\\u{E001}", e: \'\u2029\', f: "a\\\u2028b",\r\n'
        "};\r\n"
    )
    value = parse_module(text).value
    assert value == {"b": "x\u2028y", "c": "\ue000", "d": "\ue001", "e": "\u2029", "f": "ab"}
    with pytest.raises(SyncError) as exc:  # positions after them: lines as JavaScript counts
        parse_module(text.replace("};", " g: x};"), "m.jsx")  # them (U+2028 ends one)
    assert (exc.value.line, exc.value.column) == (6, 5)
