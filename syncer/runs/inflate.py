"""The deflate decoder that run archives are read with, chosen once, at import: ISA-L's (PyPI
``isal``, a declared dependency: about 0.45x zlib's CPU per byte of a run's logs, and most of
``sync verify``'s time on a real run is this decompression), else zlib-ng's (``zlib-ng``, where
it is installed instead), else the standard library's ``zlib``, always at hand.

The three take the same calls (``decompressobj(31)``: a gzip member, its CRC and length trailer
checked) and give the same bytes. Only their error texts differ, so a damaged stream is reported
in one wording of ours, whichever decoder read it.
"""

from __future__ import annotations

import importlib
import zlib
from types import ModuleType
from typing import Protocol

# Tried in this order; the standard library's zlib is the last resort.
CHOICES = ("isal.isal_zlib", "zlib_ng.zlib_ng")


class Decoder(Protocol):
    """A ``zlib.decompressobj`` of any of the three."""

    @property
    def eof(self) -> bool: ...
    @property
    def unconsumed_tail(self) -> bytes: ...
    @property
    def unused_data(self) -> bytes: ...
    def decompress(self, data: bytes, max_length: int = 0, /) -> bytes: ...


class DamagedStream(OSError):
    """Deflate data a decoder refused: not gzip, or gzip damaged (a bad block, CRC or length)."""


def _choose() -> tuple[str, ModuleType]:
    for name in CHOICES:
        try:
            return name, importlib.import_module(name)
        except ImportError:
            continue
    return "zlib", zlib


NAME, _MODULE = _choose()
_ERRORS: tuple[type[Exception], ...] = (zlib.error, _MODULE.error)


def gzip_decoder() -> Decoder:
    """A decoder of one gzip member (header, deflate data, CRC and length trailer)."""
    decoder: Decoder = _MODULE.decompressobj(31)
    return decoder


def decompress(decoder: Decoder, data: bytes, max_length: int) -> bytes:
    """At most ``max_length`` bytes of ``data`` decoded (the rest of the input is then the
    decoder's ``unconsumed_tail``)."""
    try:
        return decoder.decompress(data, max_length)
    except _ERRORS:
        raise DamagedStream("not gzip data, or damaged gzip data") from None
