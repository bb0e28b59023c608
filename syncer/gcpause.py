"""The cyclic garbage collector, paused while one large document is built.

Parsing a master config or decoding every case of a module makes tens of thousands of
containers that all stay alive until the work returns; every collection the allocations
trigger meanwhile walks them and frees nothing. Paused, loading a real 324 KB master config
takes about 40% less time and decoding a 1,048-case module about 25% less. The building code
makes no reference cycles worth collecting, and whatever garbage it leaves is collected by the
first collection after it (the collector's counts keep running while it is paused).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; an already paused collector (a nested
    use, or a caller that turned it off) is left as it is."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
