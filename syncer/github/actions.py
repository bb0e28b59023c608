"""GitHub Actions through the API: workflow runs, their artifacts, and an artifact's zip streamed
to disk.

A download bypasses PyGithub to stream: GitHub answers with a redirect to signed storage, which
is fetched without the token, so the token never leaves the API host. Its refusals wait by
``ratelimit.limit_wait``'s rules, and a zip over the cap is refused while it streams.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from urllib.parse import urljoin

import requests

from syncer import progress, secrets
from syncer.errors import SyncError
from syncer.github.api import Api
from syncer.github.ratelimit import RateLimitTooLong
from syncer.github.records import Artifact, Json, WorkflowRun, artifact_record, run_record
from syncer.github.shapes import Fields, each
from syncer.github.transport import READ_RETRIES, timed_out

# Artifacts hold logs, not models: anything bigger is not what the bot expects.
MAX_ARTIFACT_BYTES = 2 * 1024**3
_CHUNK = 1 << 16


class Actions:
    """A repository's workflow runs and artifacts (read only)."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def run(self, repo: str, run_id: int) -> WorkflowRun:
        return self.api.json("GET", f"/repos/{repo}/actions/runs/{run_id}", parse=run_record)

    def workflow_runs(
        self, repo: str, workflow: str, *, branch: str, event: str, status: str
    ) -> list[WorkflowRun]:
        """Runs of ``workflow`` (a file name or path) on ``branch``, newest first (first page)."""
        name = workflow.rsplit("/", 1)[-1]
        return self.api.json(
            "GET",
            f"/repos/{repo}/actions/workflows/{name}/runs",
            params={"branch": branch, "event": event, "status": status, "per_page": 100},
            parse=_runs,
        )

    def artifacts(self, repo: str, run_id: int) -> list[Artifact]:
        path = f"/repos/{repo}/actions/runs/{run_id}/artifacts"
        return self.api.pages(path, artifact_record, "artifacts")

    def download(
        self, artifact: Artifact, dest: Path, *, max_bytes: int = MAX_ARTIFACT_BYTES
    ) -> Path:
        """Stream ``artifact``'s zip to ``dest`` (atomically)."""
        if artifact.size > max_bytes:
            raise SyncError(f"artifact {artifact.name} is {artifact.size} bytes, over {max_bytes}")
        url, session, retries = artifact.download_url, self.api.session, self.api.retries
        for attempt in range(retries + 1):
            try:
                response = session.get(
                    url,
                    headers=self.api.auth_headers(),
                    allow_redirects=False,
                    stream=True,
                    timeout=self.api.limits.timeout,
                )
                if response.is_redirect:
                    location = urljoin(url, response.headers["Location"])
                    response.close()
                    response = session.get(location, stream=True, timeout=self.api.limits.timeout)
                wait = self._wait(response, attempt)
                if wait is not None and attempt < retries:
                    response.close()
                    time.sleep(wait)
                    continue
                if response.status_code != 200:
                    raise SyncError(
                        secrets.mask(
                            f"artifact {artifact.name}: download answered {response.status_code}"
                        )
                    )
                return _stream_to(response, dest, max_bytes, artifact.name, artifact.size)
            except requests.RequestException as exc:
                # A download that does not answer is tried once more, not every retry.
                tries = READ_RETRIES if timed_out(exc) else retries
                if attempt >= tries:
                    raise SyncError(secrets.mask(f"artifact {artifact.name}: {exc}")) from None
                time.sleep(self.api.backoff * (2**attempt))
        raise SyncError(f"artifact {artifact.name}: download failed after {retries} retries")

    def _wait(self, response: requests.Response, attempt: int) -> float | None:
        """``limit_wait`` for a streamed download (its error body read only when it may be a
        secondary rate limit's)."""
        status = response.status_code
        message = response.text[:2000] if status in (403, 429) else ""
        try:
            return self.api.limit_wait(status, response.headers, message, attempt)
        except RateLimitTooLong as exc:
            raise SyncError(f"GitHub rate limit: {exc}") from None


def _runs(data: Json) -> list[WorkflowRun]:
    listed = Fields(data).items("workflow_runs")
    return [run_record(r, at) for at, r in each(listed, "workflow_runs")]


def _stream_to(
    response: requests.Response, dest: Path, max_bytes: int, name: str, size: int
) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    total = 0
    try:
        with (
            response,
            open(tmp, "wb") as out,
            progress.byte_task(f"downloading {name}", size) as advance,
        ):
            for chunk in response.iter_content(_CHUNK):
                total += len(chunk)
                if total > max_bytes:
                    raise SyncError(f"artifact {name}: more than {max_bytes} bytes, refused")
                out.write(chunk)
                advance(len(chunk))
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest
