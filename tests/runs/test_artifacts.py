"""Run artifacts: every container form, unsafe members, limits, flat memory."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
import tarfile
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.errors import SyncError
from syncer.runs.artifacts import Limits, open_run
from syncer.runs.collect import read_run

RUN = ROOT / "examples" / "runs" / "41000000001"
LOG = (
    b"2026-10-12 07:41:09 [INFO] Job ID: 77\n"
    b"2026-10-12 07:41:09 [INFO] Starting agg worker 0 on n1\n"
    b"2026-10-12 07:41:09 [INFO] Env: A=1\n"
    b"2026-10-12 07:41:09 [INFO] Command: python3 -m sglang.launch_server --tp-size 2\n"
    b"2026-10-12 07:41:09 [INFO] Log: /x/n1_agg_w0.out\n"
)


def _tar_bytes(files: dict[str, bytes], mode: str = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _names(path: Path, limits: Limits | None = None) -> list[str]:
    run = open_run(path, limits)
    out = []
    for m in run.members():
        out.append(m.name)
        m.open().read()
    return out


def _pack_example(tmp_path: Path) -> dict[str, bytes]:
    """The example run as the files of a GitHub artifact zip: per point a
    srt-single-node-logs.tar.gz plus the metadata beside it."""
    files: dict[str, bytes] = {}
    for point_dir in sorted(RUN.iterdir()):
        if not point_dir.is_dir():
            continue
        inner = {
            p.relative_to(point_dir / "srt-single-node-logs").as_posix(): p.read_bytes()
            for p in sorted((point_dir / "srt-single-node-logs").rglob("*"))
            if p.is_file()
        }
        files[f"{point_dir.name}/srt-single-node-logs.tar.gz"] = _tar_bytes(inner)
        for meta in ("srt-slurm-sha.txt", "srt-single-node-submission.json"):
            files[f"{point_dir.name}/{meta}"] = (point_dir / meta).read_bytes()
    return files


# ---- forms ---------------------------------------------------------------------------------


def test_directory_tar_gz_zip_nested_and_single_log_give_the_same_run(tmp_path: Path) -> None:
    files = _pack_example(tmp_path)
    nested_zip = tmp_path / "artifacts.zip"
    nested_zip.write_bytes(_zip_bytes(files))
    tgz = tmp_path / "run.tgz"
    tgz.write_bytes(_tar_bytes(files))
    unpacked = tmp_path / "dir"
    for name, data in files.items():
        (unpacked / name).parent.mkdir(parents=True, exist_ok=True)
        (unpacked / name).write_bytes(data)

    def summary(path: Path) -> list[tuple[str | None, str | None, int]]:
        data = read_run(path)
        assert set(data.srt_slurm_shas.values()) == {"4be1c0d27a93f58e6d0b2c7a91f3e5d84c6a0b17"}
        return sorted((s.job_id, s.config_name, len(s.workers)) for s in data.sweeps)

    expected = summary(RUN)
    assert len(expected) == 7
    assert read_run(RUN).versions() == {
        "sglang": ["0.0.0.dev1+ge6072935b"],
        "sglang-router": ["0.3.2"],
        "torch": ["2.9.1+cu130"],
    }
    for path in (nested_zip, tgz, unpacked):
        assert summary(path) == expected, path
    member_names = [n for n in _names(nested_zip) if n.endswith(".log")]
    assert member_names[0].startswith("artifacts.zip/server_logs_")
    assert "/srt-single-node-logs.tar.gz/logs/sweep_" in member_names[0]

    single = next(RUN.rglob("sweep_5230106.log"))
    [sweep] = read_run(single).sweeps
    assert sweep.job_id == "5230106"
    gz = tmp_path / "sweep_5230106.log.gz"
    gz.write_bytes(gzip.compress(single.read_bytes()))
    assert [s.job_id for s in read_run(gz).sweeps] == ["5230106"]


def test_plain_tar_and_zip_inside_tar(tmp_path: Path) -> None:
    inner_zip = _zip_bytes({"logs/sweep_77.log": LOG})
    path = tmp_path / "run.tar"
    path.write_bytes(_tar_bytes({"artifact.zip": inner_zip}, mode="w"))
    assert [s.job_id for s in read_run(path).sweeps] == ["77"]


# ---- unsafe members ------------------------------------------------------------------------


def _hostile_tar(path: Path) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (
            ("/etc/evil.log", b"x"),
            ("../../escape/sweep_1.log", LOG),
            ("ok/logs/sweep_77.log", LOG),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("logs/sweep_2.log")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
        hard = tarfile.TarInfo("logs/sweep_3.log")
        hard.type, hard.linkname = tarfile.LNKTYPE, "ok/logs/sweep_77.log"
        tar.addfile(hard)
        dev = tarfile.TarInfo("logs/sweep_4.log")
        dev.type, dev.devmajor, dev.devminor = tarfile.CHRTYPE, 1, 3
        tar.addfile(dev)
        fifo = tarfile.TarInfo("logs/fifo")
        fifo.type = tarfile.FIFOTYPE
        tar.addfile(fifo)


def test_tar_members_with_absolute_paths_dotdot_links_and_devices_are_skipped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hostile.tar.gz"
    _hostile_tar(path)
    before = sorted(p.name for p in tmp_path.parent.iterdir())
    data = read_run(path)
    assert [s.job_id for s in data.sweeps] == ["77"]
    reasons = {s.name.split("hostile.tar.gz/", 1)[1]: s.reason for s in data.skipped}
    assert reasons["/etc/evil.log"] == "absolute path"
    assert reasons["../../escape/sweep_1.log"] == "'..' in the path"
    assert reasons["logs/sweep_2.log"].startswith("link")
    assert reasons["logs/sweep_3.log"].startswith("link")
    assert reasons["logs/sweep_4.log"].startswith("device")
    assert reasons["logs/fifo"].startswith("device")
    # Nothing was written anywhere: the temp dir's parent and the tmp dir are unchanged.
    assert sorted(p.name for p in tmp_path.parent.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile.tar.gz"]
    assert not (tmp_path.parent.parent / "escape").exists()


def test_zip_members_with_absolute_paths_dotdot_and_links_are_skipped(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("/abs/sweep_1.log", LOG)
        zf.writestr("a/../../sweep_2.log", LOG)
        zf.writestr("C:/win/sweep_3.log", LOG)
        link = zipfile.ZipInfo("logs/sweep_4.log")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr("logs/sweep_77.log", LOG)
    path = tmp_path / "a.zip"
    path.write_bytes(buf.getvalue())
    data = read_run(path)
    assert [s.job_id for s in data.sweeps] == ["77"]
    reasons = sorted(s.reason for s in data.skipped)
    assert reasons == [
        "'..' in the path",
        "absolute path",
        "absolute path",
        "link (never followed)",
    ]


def test_links_in_a_run_directory_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "sweep_9.log").write_bytes(LOG.replace(b"Job ID: 77", b"Job ID: 9"))
    run = tmp_path / "run"
    (run / "logs").mkdir(parents=True)
    (run / "logs" / "sweep_77.log").write_bytes(LOG)
    os.symlink(outside / "sweep_9.log", run / "logs" / "sweep_9.log")
    os.symlink(outside, run / "linked-dir")
    os.mkfifo(run / "logs" / "sweep_fifo.log")
    data = read_run(run)
    assert [s.job_id for s in data.sweeps] == ["77"]
    assert sorted(s.name for s in data.skipped) == [
        "linked-dir",
        "logs/sweep_9.log",
        "logs/sweep_fifo.log",
    ]


# ---- limits --------------------------------------------------------------------------------


def test_total_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.tar.gz"
    path.write_bytes(_tar_bytes({"logs/sweep_1.log": LOG, "logs/pad.out": os.urandom(300_000)}))
    with pytest.raises(SyncError) as err:
        read_run(path, Limits(max_total_bytes=200_000))
    assert "decompresses to more than" in err.value.message and err.value.path == str(path)


def test_member_count_limit(tmp_path: Path) -> None:
    path = tmp_path / "many.zip"
    path.write_bytes(_zip_bytes({f"f{i}.txt": b"x" for i in range(50)}))
    with pytest.raises(SyncError) as err:
        read_run(path, Limits(max_members=20))
    assert "declares 50 members" in err.value.message  # read from the end record
    tgz = tmp_path / "many.tgz"
    tgz.write_bytes(_tar_bytes({f"f{i}.txt": b"x" for i in range(50)}))
    with pytest.raises(SyncError) as err:
        read_run(tgz, Limits(max_members=20))
    assert "more than 20 members" in err.value.message


def test_zip_bomb_is_refused_before_reading(tmp_path: Path) -> None:
    # 64 MiB of zeros deflates to ~64 KiB: a 1000x ratio only a bomb has.
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("logs/sweep_1.log", "w") as fh,
    ):
        block = b"\0" * (1 << 20)
        for _ in range(64):
            fh.write(block)
    path = tmp_path / "bomb.zip"
    path.write_bytes(buf.getvalue())
    assert path.stat().st_size < 1 << 20
    with pytest.raises(SyncError) as err:
        read_run(path)
    assert "archive bomb" in err.value.message and "expands more than 250x" in err.value.message


def test_gzip_bomb_is_refused_while_streaming(tmp_path: Path) -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    path = tmp_path / "bomb.tar.gz"
    with path.open("wb") as fh:
        # A member nobody reads still has to be decompressed past: the ratio check stops it.
        info = tarfile.TarInfo("logs/gb300-n1_agg_w0.out")
        info.size = 1 << 30  # the header claims 1 GiB; the stream is zeros
        fh.write(comp.compress(info.tobuf()))
        block = b"\0" * (1 << 20)
        for _ in range(40):
            fh.write(comp.compress(block))
        fh.write(comp.flush())
    tracemalloc.start()
    with pytest.raises(SyncError) as err:
        read_run(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "archive bomb" in err.value.message
    assert peak < 16 << 20


def test_nesting_depth_limit(tmp_path: Path) -> None:
    data = _tar_bytes({"logs/sweep_1.log": LOG})
    for i in range(4):
        data = _zip_bytes({f"level{i}.tar.gz" if i == 0 else f"level{i}.zip": data})
    path = tmp_path / "deep.zip"
    path.write_bytes(data)
    with pytest.raises(SyncError) as err:
        read_run(path)
    assert "nests archives deeper than 3" in err.value.message


# ---- memory, bad input ---------------------------------------------------------------------


def test_memory_stays_flat_on_a_large_log(tmp_path: Path) -> None:
    path = tmp_path / "big.tar.gz"
    noise = b"".join(
        b"2026-10-12 07:41:09 [INFO] iteration %d: decode batch ok, tokens=%d\n" % (i, i * 7)
        for i in range(4000)
    )
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        body = LOG + noise * 120  # ~32 MiB
        info = tarfile.TarInfo("logs/sweep_77.log")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
        del body
    tracemalloc.start()
    data = read_run(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [s.job_id for s in data.sweeps] == ["77"]
    assert data.sweeps[0].lines > 480_000
    assert peak < 12 << 20, peak


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("run.tar.gz", b"this is not gzip at all" * 10, "corrupt or truncated"),
        ("run.zip", b"PK\x03\x04 not really a zip", "not a readable zip"),
        ("sweep.log", b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary"),
        ("notes.txt", b"hello\nno srt-slurm here\n", "no srt-slurm worker launch"),
    ],
)
def test_garbage_inputs_are_errors(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SyncError) as err:
        read_run(path)
    assert message in err.value.message


def test_truncated_archive_is_an_error(tmp_path: Path) -> None:
    whole = _tar_bytes({"logs/sweep_77.log": LOG + os.urandom(200_000)})
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(SyncError) as err:
        read_run(path)
    assert "truncated" in err.value.message


def test_missing_run(tmp_path: Path) -> None:
    with pytest.raises(SyncError) as err:
        read_run(tmp_path / "nope")
    assert "no such run" in err.value.message
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SyncError) as err:
        read_run(empty)
    assert "no srt-slurm sweep log" in err.value.message
    shutil.rmtree(empty)


def test_concatenated_gzip_members_and_zero_padding(tmp_path: Path) -> None:
    half = len(LOG) // 2
    path = tmp_path / "sweep_77.log.gz"
    path.write_bytes(gzip.compress(LOG[:half]) + gzip.compress(LOG[half:]) + b"\0" * 512)
    [sweep] = read_run(path).sweeps
    assert sweep.job_id == "77" and len(sweep.workers) == 1


def test_broken_metadata_files_are_passed_over(tmp_path: Path) -> None:
    # Fingerprints and submission manifests are optional and come from the PR's run: bad
    # UTF-8, bad JSON or nesting too deep to parse leaves them out, never a traceback.
    run = tmp_path / "run"
    run.mkdir()
    (run / "sweep_5230106.log").write_bytes(next(RUN.rglob("sweep_5230106.log")).read_bytes())
    (run / "fingerprint_deep.json").write_text("[" * 100_000)
    (run / "fingerprint_bytes.json").write_bytes(b'{"sglang": "\xff"}')
    (run / "fingerprint_good.json").write_text('{"packages": {"sglang": "0.5.1"}}')
    (run / "srt-single-node-submission.json").write_text('{"job_id": ' + "[" * 100_000)
    data = read_run(run)
    assert data.versions() == {"sglang": ["0.5.1"]}
    assert [s.job_id for s in data.sweeps] == ["5230106"]


def test_skipped_members_count_against_the_member_limit(tmp_path: Path) -> None:
    # Links are never followed, but each one is a header read and a note kept: an archive of
    # millions of them must hit the member limit, not grow the skipped list without bound.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for i in range(50):
            info = tarfile.TarInfo(f"logs/link{i}")
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
    path = tmp_path / "links.tgz"
    path.write_bytes(buf.getvalue())
    with pytest.raises(SyncError) as err:
        read_run(path, Limits(max_members=20))
    assert "more than 20 members" in err.value.message
