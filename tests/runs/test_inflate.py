"""Run archives are decompressed by the fastest deflate decoder at hand (ISA-L's, a declared
dependency), with zlib-ng's and the standard library's zlib kept as the fallbacks: each chosen
decoder gives the same bytes, the same reports and the same errors (issue 39.1). And the tar
reader that passes over unread members by seeking forwards gives every member's bytes whatever
its size and however much of it is read."""

from __future__ import annotations

import functools
import gzip
import importlib
import io
import itertools
import json
import subprocess
import sys
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.errors import SyncError
from syncer.runs import inflate
from syncer.runs.artifacts import CHUNK, open_run
from syncer.runs.collect import read_run

RUN = ROOT / "examples" / "runs" / "41000000001"
KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
# Each decoder, and the modules to hide so that it is the one chosen at import.
DECODERS = {
    "isal.isal_zlib": (),
    "zlib_ng.zlib_ng": ("isal", "isal.isal_zlib"),
    "zlib": ("isal", "isal.isal_zlib", "zlib_ng", "zlib_ng.zlib_ng"),
}


def _installed(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


@pytest.fixture(params=list(DECODERS))
def decoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``syncer.runs.inflate`` imported again with the decoders before this one hidden."""
    name: str = request.param
    if not _installed(name):
        pytest.skip(f"{name} is not installed here")
    for hidden in DECODERS[name]:
        monkeypatch.setitem(sys.modules, hidden, None)  # None in sys.modules: ImportError
    importlib.reload(inflate)
    try:
        assert name == inflate.NAME
        yield name
    finally:
        monkeypatch.undo()
        importlib.reload(inflate)


def test_isal_is_the_decoder_of_an_installed_tool() -> None:
    # a declared dependency (pyproject), so every installation has it
    assert inflate.NAME == "isal.isal_zlib"


def _noise(size: int, seed: int) -> bytes:
    """Log-like bytes that compress about as real logs do (not one repeated line)."""
    out = bytearray()
    i = seed
    while len(out) < size:
        i = (i * 1103515245 + 12345) % (1 << 31)
        out += b"[2026-10-12 08:00:%02d] Decode batch. #token: %d, gen throughput: %d.%02d\n" % (
            i % 60,
            i % 900000,
            i % 9000,
            i % 100,
        )
    return bytes(out[:size])


# Sizes around the tar block (512) and the reader's read-ahead (CHUNK), and how much of each
# member the test reads: all, its first 100 bytes, or nothing.
SIZES = (0, 1, 511, 512, 513, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 5)
READS = ("all", "head", "none")


@functools.cache
def _members() -> dict[str, bytes]:
    members = {}
    for n, size in enumerate(SIZES):
        for how in READS:
            members[f"logs/{how}/m{n}.out"] = _noise(size, n * 7 + len(how))
    return members


def _read(path: Path) -> dict[str, bytes]:
    """What the run reader gives of each member, read as its name says."""
    got = {}
    for member in open_run(path).members():
        how = member.name.split("/")[-2]
        if how == "none":
            got[member.name] = b""
            continue
        stream = member.open()
        if how == "head":
            got[member.name] = stream.read(100)
            continue
        parts = []
        while chunk := stream.read(CHUNK):
            parts.append(chunk)
        got[member.name] = b"".join(parts)
    return got


def _expected(label: str, members: dict[str, bytes]) -> dict[str, bytes]:
    want = {}
    for name, data in members.items():
        how = name.split("/")[-2]
        want[f"{label}/{name}"] = data if how == "all" else data[:100] if how == "head" else b""
    return want


def _tar(members: dict[str, bytes], mode: str) -> bytes:
    buf = io.BytesIO()
    level = {"compresslevel": 1} if mode == "w:gz" else {}
    with tarfile.open(fileobj=buf, mode=mode, **level) as tar:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@functools.cache
def _archive(form: str) -> tuple[str, bytes]:
    """The members of ``_members`` in the run of ``form``: its file name and bytes."""
    members = _members()
    if form == "tar":
        return "run.tar", _tar(members, "w")
    if form == "zip of tar.gz":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("logs.tar.gz", _tar(members, "w:gz"))
        return "run.zip", buf.getvalue()
    data = _tar(members, "w:gz")
    if form == "multi-member tar.gz":
        # the same tar cut into three gzip members (as `cat a.gz b.gz` makes), zero padded
        plain = gzip.decompress(data)
        cuts = (0, 1000, len(plain) // 2, len(plain))
        parts = itertools.pairwise(cuts)
        data = b"".join(gzip.compress(plain[a:b], compresslevel=1) for a, b in parts)
        data += b"\0" * 1024
    return "run.tar.gz", data


@pytest.mark.parametrize("form", ["tar.gz", "tar", "zip of tar.gz", "multi-member tar.gz"])
def test_every_member_whatever_its_size_and_however_much_is_read(
    tmp_path: Path, decoder: str, form: str
) -> None:
    name, data = _archive(form)
    path = tmp_path / name
    path.write_bytes(data)
    label = "run.zip/logs.tar.gz" if form == "zip of tar.gz" else name
    assert _read(path) == _expected(label, _members())


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda d: _flip(d, len(d) - 6), id="CRC"),
        pytest.param(lambda d: _flip(d, len(d) - 2), id="length"),
        pytest.param(lambda d: _flip(d, 40), id="deflate data"),
        pytest.param(lambda d: b"\x1f\x8b\x08\x00" + b"garbage" * 20, id="not deflate"),
        pytest.param(lambda d: d[: len(d) // 2], id="truncated"),
    ],
)
def test_a_damaged_stream_is_one_error_whichever_decoder_reads_it(
    tmp_path: Path, decoder: str, damage: Callable[[bytes], bytes]
) -> None:
    good = _tar({"logs/sweep_1.log": _noise(200_000, 3)}, "w:gz")
    path = tmp_path / "run.tar.gz"
    path.write_bytes(damage(good))
    with pytest.raises(SyncError) as err:
        read_run(path)
    message = err.value.message
    assert message.startswith('"run.tar.gz" is corrupt or truncated: '), message
    assert message.endswith(
        (
            "not gzip data, or damaged gzip data",
            "compressed stream ended before the end-of-stream marker",
        )
    ), message


# `sync verify` in a process of its own, the decoders in DECODERS[NAME] hidden before the tool
# is imported; which decoder it chose is printed on stderr after its report.
VERIFY = """
import sys
for hidden in {hidden!r}:
    sys.modules[hidden] = None
try:
    from syncer.cli import run
    run()
finally:
    print("decoder:", sys.modules["syncer.runs.inflate"].NAME, file=sys.stderr)
"""


def _verify(archive: Path, hidden: tuple[str, ...]) -> tuple[str, str]:
    argv = [
        *("verify", KEY, "--run", str(archive)),
        *("--inferencex", str(ROOT / "examples" / "inferencex" / "inferencex-e2e")),
        *("--cookbook", str(ROOT / "cookbook_snippets"), "--format", "json"),
    ]
    done = subprocess.run(
        [sys.executable, "-c", VERIFY.format(hidden=hidden), *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.strip().splitlines()[-1]


def test_verify_reports_the_same_with_the_standard_library_decoder(tmp_path: Path) -> None:
    archive = tmp_path / "run.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(RUN, arcname="41000000001")
        info = tarfile.TarInfo("41000000001/logs/big_w0.out")  # a large member passed over
        big = _noise(3 * CHUNK, 11)
        info.size = len(big)
        tar.addfile(info, io.BytesIO(big))
    fast, fast_decoder = _verify(archive, ())
    fallback, fallback_decoder = _verify(archive, DECODERS["zlib"])
    assert (fast_decoder, fallback_decoder) == ("decoder: isal.isal_zlib", "decoder: zlib")
    assert json.loads(fast)["verdict"] == "agree"
    assert fast == fallback


def test_the_fallback_decoder_is_the_standard_librarys_zlib(decoder: str) -> None:
    # what the reports above were made with: the module's own decoder, not a stand-in
    module = {"zlib": zlib}.get(decoder) or importlib.import_module(decoder)
    data = gzip.compress(b"x" * 100)
    made = inflate.gzip_decoder()
    assert type(made) is type(module.decompressobj(31))
    assert inflate.decompress(made, data, 1 << 10) == b"x" * 100 and made.eof
