"""The streams a run's archive is read through, without a copy more than needed: a gzip
stream decoded member by member on the decoder :mod:`syncer.runs.inflate` chose (``Gunzip``),
and a forward-only view tarfile's random-access mode can seek in (``Forward``).
"""

from __future__ import annotations

import os
from typing import Protocol

from syncer.runs import inflate

CHUNK = 1 << 20
# Compressed input is handed to the decoder in steps this size: at a log's usual 3-10x ratio one
# step decodes to about one CHUNK of output, so little is left over as ``unconsumed_tail`` (which
# the decoder copies on every call).
_IN_CHUNK = 1 << 18


class Readable(Protocol):
    """What every reader of a run's bytes needs of a stream: ``read(n)``, nothing more (a
    member of a tar stream or a decompressed stream can do no more)."""

    def read(self, n: int = -1, /) -> bytes: ...


class Gunzip:
    """Streaming gzip reader on the decoder :mod:`syncer.runs.inflate` chose (which checks each
    member's CRC and length trailer). A read returns what one call of the decoder gave, at most
    ``n`` bytes and possibly fewer: nothing is gathered in a buffer of ours to be joined and
    sliced again (a run's gigabytes went through three such copies), and the output of one read
    is bounded, so a bomb cannot balloon it."""

    def __init__(self, raw: Readable) -> None:
        self.raw = raw
        self.d = inflate.gzip_decoder()
        self.pending = b""
        self.between = False  # at a member boundary: the end of input is then a clean end
        self.done = False

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = CHUNK
        while not self.done:
            data = self.d.unconsumed_tail or self.pending or self.raw.read(_IN_CHUNK)
            self.pending = b""
            if not data:
                if not self.between:
                    raise EOFError("compressed stream ended before the end-of-stream marker")
                self.done = True
                break
            if self.between:
                if not data.strip(b"\0"):
                    continue  # zero padding after the last member
                # Concatenated gzip members form one stream.
                self.d, self.between = inflate.gzip_decoder(), False
            out = inflate.decompress(self.d, data, n)
            if self.d.eof:
                self.between = True
                self.pending = self.d.unused_data
            if out:
                return out
        return b""

    def readable(self) -> bool:
        return True


class Forward:
    """A stream (decompressed or not) as tarfile's random-access mode reads it: a seek forward
    reads past the bytes and drops them, so a member nobody reads is passed over without being
    copied (stream mode, ``r|``, gathered every byte of the run in a buffer of its own first); a
    seek backward, which tarfile never makes when it reads members in order, is refused.

    Small reads (tar headers, small members) are served from one read-ahead of CHUNK bytes, not
    asked of the decoder one by one (each call of it copies the input it has left)."""

    def __init__(self, raw: Readable) -> None:
        self.raw = raw
        self.pos = 0  # where in the stream ``buf[at]`` is
        self.buf = b""
        self.at = 0

    def tell(self) -> int:
        return self.pos

    def seek(self, pos: int, whence: int = os.SEEK_SET) -> int:
        if whence != os.SEEK_SET or pos < self.pos:
            raise OSError("a streamed archive is read forwards only")
        buffered = min(pos - self.pos, len(self.buf) - self.at)
        self.at += buffered
        self.pos += buffered
        while self.pos < pos:
            dropped = len(self.raw.read(min(pos - self.pos, CHUNK)))
            if not dropped:
                break  # the read that follows finds the end
            self.pos += dropped
        return self.pos

    def read(self, n: int) -> bytes:
        """``n`` bytes, fewer only at the end (tarfile reads headers and members exactly)."""
        parts: list[bytes] = []
        got = 0
        while got < n:
            if self.at < len(self.buf):
                take = min(n - got, len(self.buf) - self.at)
                parts.append(self.buf[self.at : self.at + take])  # all of buf: not copied
                self.at += take
            elif n - got >= CHUNK:
                if not (data := self.raw.read(n - got)):
                    break
                parts.append(data)
                take = len(data)
            else:
                self.buf, self.at = self.raw.read(CHUNK), 0
                if not self.buf:
                    break
                continue
            got += take
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        self.pos += len(data)
        return data
