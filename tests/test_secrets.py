from __future__ import annotations

import io
import logging
import sys

import pytest

from syncer import secrets
from syncer.errors import SyncError


def test_mask_known_and_token_shaped_strings():
    secrets.register("s3cr3t-value-123")
    text = (
        "a s3cr3t-value-123 b ghp_"
        + "a" * 36
        + " ghs_"
        + "B1" * 20
        + " github_pat_"
        + "x_9" * 25
        + " gho_short"
    )
    out = secrets.mask(text)
    assert out == "a *** b *** *** *** gho_short"
    assert secrets.mask(None) == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "fatal: unable to access 'https://x-access-token:opaque42@github.com/o/r.git/'",
            "fatal: unable to access 'https://***@github.com/o/r.git/'",
        ),
        ("push to https://opaque-token-1@github.com/o/r", "push to https://***@github.com/o/r"),
        ("ssh://deploy:pw@host/r.git", "ssh://***@host/r.git"),
        # No credentials: left as they are.
        ("git@github.com:o/r.git and ssh://git@github.com/o/r", None),
        ("see https://github.com/o/r/pull/1 or mail a@b.example", None),
    ],
)
def test_credentials_in_urls_are_masked(text, expected):
    assert secrets.mask(text) == (expected or text)


def test_short_values_are_not_registered():
    secrets.register("abc")
    assert secrets.mask("abc") == "abc"


def test_token_from_env_only(monkeypatch):
    monkeypatch.delenv("COOKBOOK_TOKEN", raising=False)
    with pytest.raises(SyncError, match="COOKBOOK_TOKEN") as info:
        secrets.token_from_env(("COOKBOOK_TOKEN",))
    assert "set one of" in str(info.value)
    monkeypatch.setenv("COOKBOOK_TOKEN", "plain-token-without-shape-42")
    assert secrets.token_from_env(("COOKBOOK_TOKEN",)) == "plain-token-without-shape-42"
    assert secrets.mask("x plain-token-without-shape-42 y") == "x *** y"


def test_streams_and_logging_are_masked(monkeypatch):
    token = "ghs_" + "Z" * 36
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    root = logging.getLogger()
    saved_filters, saved_handlers = list(root.filters), list(root.handlers)
    handler = logging.StreamHandler(err)
    root.addHandler(handler)
    try:
        secrets.install()
        secrets.install()  # idempotent
        print(f"token {token}")
        logging.getLogger("github.Requester").warning("header %s", token)
        try:
            raise RuntimeError(f"boom {token}")
        except RuntimeError:
            logging.getLogger("x").exception("failed")
        sys.stderr.write(f"{token}\n")
    finally:
        root.filters[:] = saved_filters
        root.handlers[:] = saved_handlers
    assert token not in out.getvalue() + err.getvalue()
    assert "token ***" in out.getvalue()
    assert "header ***" in err.getvalue() and "boom ***" in err.getvalue()


def test_click_output_through_the_mask(monkeypatch):
    import click

    token = "ghp_" + "Q" * 36
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", secrets.MaskingStream(out))
    monkeypatch.setattr(sys, "stderr", secrets.MaskingStream(err))
    click.echo(f"plan {token}")
    click.echo(f"error: {token}", err=True)
    assert out.getvalue() == "plan ***\n" and err.getvalue() == "error: ***\n"
    with pytest.raises(TypeError):
        sys.stdout.write(b"raw")


def test_uncaught_traceback_is_masked(tmp_path):
    import os
    import subprocess

    token = "github_pat_" + "R" * 40
    code = (
        "import os\n"
        "from syncer import secrets\n"
        "secrets.install()\n"
        "secrets.token_from_env(('COOKBOOK_TOKEN',))\n"
        "raise RuntimeError('failed with ' + os.environ['COOKBOOK_TOKEN'])\n"
    )
    env = {**os.environ, "COOKBOOK_TOKEN": token}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "RuntimeError: failed with ***" in proc.stderr
    assert token not in proc.stderr + proc.stdout


def test_masking_by_line_is_the_whole_text_substitution_on_random_texts():
    """``mask`` applies the URL-credentials pattern only to lines holding ``://`` and the token
    shapes only where a token prefix occurs; over random texts of the pieces these patterns
    look at, the result is the patterns applied to the whole text."""
    import random

    def whole_text(text: str) -> str:
        out = secrets._URL_CREDENTIALS.sub(lambda m: f"{m.group(1) or m.group(2)}***@", text)
        return secrets._TOKEN_SHAPES.sub("***", out)

    pieces = [
        "https://", "http://", "ssh://", "x+y.z-1://", "://", "user", ":", "pw", "@", "/", " ",
        "\n", "\r\n", "\t", "\x85", "\u2028", "_", "ſ", "K", "é", "h", "ghp_", "github_pat_",
        "A" * 20, "b9" * 6, "git@github.com:o/r", ".",
    ]  # fmt: skip
    rng = random.Random(23)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert secrets.mask(text) == whole_text(text), repr(text)
