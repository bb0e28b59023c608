"""`python -m bench verify [--gib N] [--runs N] [--keep DIR]`: `sync verify` on a large run.

Writes a synthetic run archive (default 1 GiB decompressed) into a temporary directory — never
into the repository — built from the bundled example run: the seven sweep logs of run
41000000001, each padded with orchestrator noise, plus large worker ``.out`` logs with long lines.
Then measures, interleaved in the same run (a loaded machine slows both sides alike):

* ``sync verify dsv41flash-fp4-gb300-sglang-agentic-dspark --run ARCHIVE --format json`` in a
  child process: CPU time (user + system) and peak RSS (``os.wait4`` rusage of that child);
* the reference pipeline ``tar -xzOf ARCHIVE | grep -c Command:``: CPU time of the pipeline's
  processes (``os.wait4`` counts the children the shell waited for);
* memory flat: the same ``sync verify`` on a run of 1/16 the size, whose peak RSS the full
  run's may exceed by at most 16 MiB (memory that grew with the archive would show here).

Target (issue 39): ``sync verify`` CPU <= 0.3x the pipeline's (medians of ``--runs``, default 5,
after one uncounted round), peak RSS <= 150 MB and flat. Exit code 0 when the targets hold and
verify agreed (exit 0), else 1.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench import timing

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
RUN = Path(__file__).resolve().parents[1] / "examples" / "runs" / "41000000001"
RSS_TARGET_MB = 150.0
TIME_TARGET = 0.3
FLAT_SLACK_MB = 16.0
MiB = 1 << 20


def _noise_pool(size: int, seed: int) -> bytes:
    """Worker-log-like text (scheduler lines, every fifth a long stats line of a few KB) that
    compresses about as well as real logs (~8x), so the archive is a realistic size and not a
    bomb."""
    rnd = random.Random(seed)
    out: list[bytes] = []
    total = 0
    i = 0
    keys = ("rank", "bs", "tok", "kv", "hit", "tp", "lat", "queue", "evict", "swa")
    while total < size:
        i += 1
        stamp = f"[2026-10-12 08:{i // 60 % 60:02d}:{i % 60:02d} TP{i % 4}]"
        if i % 5 == 0:
            fields = " ".join(
                f"{rnd.choice(keys)}{j % 64}={rnd.randint(0, 4096)}"
                for j in range(rnd.randint(200, 600))
            )
            line = f"{stamp} Scheduler stats: {fields}\n"
        else:
            line = (
                f"{stamp} Decode batch. #running-req: {rnd.randint(0, 256)}, "
                f"#token: {rnd.randint(0, 900000)}, token usage: {rnd.random():.2f}, "
                f"accept len: {rnd.uniform(1, 5):.2f}, "
                f"gen throughput (token/s): {rnd.uniform(10, 9000):.2f}, "
                f"#queue-req: {rnd.randint(0, 64)}\n"
            )
        data = line.encode()
        out.append(data)
        total += len(data)
    return b"".join(out)


def _sweep_noise(pool: bytes, size: int) -> bytes:
    """Orchestrator-style lines; a few carry a marker the parser must look at."""
    lines = []
    total = 0
    k = 0
    while total < size:
        k += 1
        if k % 997 == 0:
            line = f"2026-10-12 08:00:00 [INFO] Starting health probe {k} on gb300-a07-n03\n"
        else:
            start = (k * 7919) % (len(pool) - 200)
            line = (
                "2026-10-12 08:00:00 [INFO] "
                + pool[start : start + 160].decode("ascii", "replace").replace("\n", " ")
                + "\n"
            )
        lines.append(line.encode())
        total += len(lines[-1])
    return b"".join(lines)


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    import io

    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1_760_000_000
    tar.addfile(info, io.BytesIO(data))


def _add_repeated(tar: tarfile.TarFile, name: str, chunk: bytes, size: int) -> None:
    """A member of ``size`` bytes made of ``chunk`` repeated, streamed (never held whole)."""

    view = memoryview(chunk)

    class Repeat:
        def __init__(self) -> None:
            self.left = size
            self.pos = 0

        def read(self, n: int = -1) -> bytes:
            n = self.left if n < 0 else min(n, self.left)
            parts = []
            got = 0
            while got < n:
                take = min(n - got, len(view) - self.pos)
                parts.append(view[self.pos : self.pos + take])
                self.pos = (self.pos + take) % len(view)
                got += take
            self.left -= n
            return b"".join(parts)

    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = 1_760_000_000
    tar.addfile(info, Repeat())  # type: ignore[arg-type]


def write_archive(path: Path, gib: float) -> int:
    """Write the synthetic run; returns its decompressed size in bytes."""
    target = int(gib * (1 << 30))
    pool = _noise_pool(min(32 * MiB, max(MiB, target // 16)), 1)
    points = sorted(p for p in RUN.iterdir() if p.is_dir())
    sweep_pad = min(8 * MiB, target // 64)
    out_size = max((target - len(points) * sweep_pad) // len(points), MiB)
    total = 0
    with tarfile.open(path, "w:gz", compresslevel=1, copybufsize=4 * MiB) as tar:
        for n, point in enumerate(points):
            for src in sorted(point.rglob("*")):
                if not src.is_file():
                    continue
                rel = src.relative_to(RUN).as_posix()
                data = src.read_bytes()
                if src.name.startswith("sweep_"):
                    lines = data.split(b"\n")
                    cut = next(i for i, ln in enumerate(lines) if b"Starting backend" in ln)
                    pad = _sweep_noise(pool, sweep_pad)
                    data = b"\n".join(lines[:cut]) + b"\n" + pad + b"\n".join(lines[cut:])
                _add(tar, rel, data)
                total += len(data)
            logs = f"{point.name}/srt-single-node-logs/logs"
            # Rotate the pool so members differ; gzip's window never sees the repetition.
            rot = (n * 5 * MiB) % len(pool)
            _add_repeated(tar, f"{logs}/gb300_agg_w0.out", pool[rot:] + pool[:rot], out_size)
            total += out_size
    return total


def _verify_cmd(archive: Path) -> list[str]:
    # --run names the user's own input, so the bundled example's other inputs are named too.
    inputs = ["--inferencex", "examples/inferencex/inferencex-e2e"]
    inputs += ["--cookbook", "cookbook_snippets"]
    run = ["--run", str(archive), *inputs, "--format", "json"]
    return [sys.executable, "-m", "syncer", "verify", KEY, *run]


def _write(archive: Path, gib: float) -> int:
    """Write the archive (or reuse the one a --keep run left, with the same --gib); returns its
    decompressed size."""
    stamp = archive.with_name(archive.name + ".size")
    if archive.is_file() and stamp.is_file():
        kept_gib, size = stamp.read_text().split()
        if float(kept_gib) == gib:
            return int(size)
    # A child writes the archive: a forked child's peak RSS counts its parent's pages at fork
    # time, so this measuring process has to stay small.
    writer = subprocess.run(
        [sys.executable, "-m", "bench", "verify", "--gib", str(gib), "--write", str(archive)],
        check=True,
        capture_output=True,
        text=True,
        cwd=RUN.parents[2],  # the repository root, where `-m bench` is found
    )
    size = int(writer.stdout.strip())
    stamp.write_text(f"{gib} {size}\n")
    return size


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench verify")
    parser.add_argument("--gib", type=float, default=1.0, help="decompressed size (default 1)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--keep", type=Path, help="write the archives here and keep them (reused on the next run)"
    )
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write:
        print(write_archive(args.write, args.gib))
        return 0
    if not RUN.is_dir():
        print(f"example run not found at {RUN}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sync-bench-verify-") as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        archive = where / "run-41000000001.tar.gz"
        small = where / "run-41000000001-small.tar.gz"
        t0 = time.perf_counter()
        size = _write(archive, args.gib)
        small_size = _write(small, args.gib / 16)
        print(
            f"archive: {archive.stat().st_size / MiB:.0f} MiB compressed, "
            f"{size / MiB:.0f} MiB decompressed; a 1/16 run of {small_size / MiB:.0f} MiB "
            f"(written in {time.perf_counter() - t0:.1f} s)"
        )
        commands = {
            "pipeline": ["bash", "-c", f"tar -xzOf '{archive}' | grep -c Command: > /dev/null"],
            "verify": _verify_cmd(archive),
            "small": _verify_cmd(small),
        }
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        rss: dict[str, list[float]] = {name: [] for name in commands}
        codes: list[int] = []
        for round_ in range(1 + args.runs):  # the first round warms the page cache, uncounted
            for name, cmd in commands.items():
                seconds, peak, code = timing.rusage_run(cmd, cwd=RUN.parents[2])
                if name == "pipeline" and code not in (0, 1):
                    raise SystemExit(f"reference pipeline failed with exit code {code}")
                if round_:
                    cpu[name].append(seconds)
                    rss[name].append(peak)
                    if name != "pipeline":
                        codes.append(code)
        pipe, ours = statistics.median(cpu["pipeline"]), statistics.median(cpu["verify"])
        ratio = ours / pipe
        peak, small_peak = max(rss["verify"]), max(rss["small"])
        flat = peak <= small_peak + FLAT_SLACK_MB
        print(f"tar -xzOf | grep -c Command:  {pipe:.2f} s CPU (median of {args.runs})")
        print(
            f"sync verify --run ARCHIVE     {ours:.2f} s CPU "
            f"({ours / (size / (1 << 30)):.2f} s per GiB)"
        )
        print(f"CPU ratio: {ratio:.2f}x (target <= {TIME_TARGET}x)")
        print(
            f"peak RSS of sync verify: {peak:.0f} MB (target <= {RSS_TARGET_MB:.0f} MB); "
            f"on the 1/16 run {small_peak:.0f} MB: "
            f"{'flat' if flat else 'NOT flat'} (at most {FLAT_SLACK_MB:.0f} MB more)"
        )
        print(f"sync verify exit codes: {codes}")
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"(the measuring process itself peaked at {own:.0f} MB)")
        ok = ratio <= TIME_TARGET and peak <= RSS_TARGET_MB and flat and set(codes) == {0}
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
