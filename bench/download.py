"""`python -m bench download [SMALL_MB LARGE_MB]`: memory stays flat while the bot
downloads a run artifact.

A loopback server answers like GitHub (a redirect to signed storage, then the zip bytes);
``GitHubClient.actions.download`` streams a SMALL (reference run, default 4 MB) and a LARGE
(default 64 MB) artifact in the same process. Reported: peak Python heap during each download
(tracemalloc) and the ratio large / small, target <= 1.5 (a buffered download would scale with
the size, 16x here), plus the time per MB relative to the reference run.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

_CHUNK = b"\0" * (1 << 20)


class _Handler(BaseHTTPRequestHandler):
    sizes: ClassVar[dict[str, int]] = {}

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        name = self.path.rsplit("/", 1)[-1]
        if self.path.startswith("/zip/"):
            self.send_response(302)
            self.send_header("Location", f"/blob/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        megabytes = self.sizes[name]
        self.send_response(200)
        self.send_header("Content-Length", str(megabytes << 20))
        self.end_headers()
        for _ in range(megabytes):
            self.wfile.write(_CHUNK)


def _measure(client: Any, url: str, name: str, size: int, dest: Path) -> tuple[int, float]:
    from syncer.github.records import Artifact

    artifact = Artifact(1, name, False, size << 20, url)
    tracemalloc.start()
    start = time.perf_counter()
    client.actions.download(artifact, dest, max_bytes=(size + 1) << 20)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if dest.stat().st_size != size << 20:
        raise SystemExit(f"download of {name} is {dest.stat().st_size} bytes")
    dest.unlink()
    return peak, elapsed


def main(argv: list[str]) -> int:
    small, large = (int(argv[0]), int(argv[1])) if len(argv) == 2 else (4, 64)
    from syncer.github.client import GitHubClient

    _Handler.sizes = {"small": small, "large": large}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    client = GitHubClient("bench-token-not-secret", base_url=base, pause=0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            ref_peak, ref_time = _measure(
                client, f"{base}/zip/small", "small", small, Path(tmp) / "s.zip"
            )
            peak, elapsed = _measure(
                client, f"{base}/zip/large", "large", large, Path(tmp) / "l.zip"
            )
    finally:
        server.shutdown()
    ratio = peak / ref_peak
    speed = (elapsed / large) / (ref_time / small)
    print(f"{'artifact':10} {'MB':>5} {'peak heap':>10} {'s/MB':>8}")
    print(f"{'small':10} {small:5d} {ref_peak:10d} {ref_time / small:8.4f}")
    print(f"{'large':10} {large:5d} {peak:10d} {elapsed / large:8.4f}")
    print(
        f"peak heap ratio {ratio:.2f} (target <= 1.50 for {large // small}x the bytes); "
        f"time per MB ratio {speed:.2f}"
    )
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
