"""Dispatch `python -m bench NAME ...` to ``bench.<NAME>.main(argv)``."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import bench


def available() -> list[str]:
    modules = pkgutil.iter_modules(bench.__path__)
    return sorted(m.name for m in modules if m.name != "__main__")


def main(argv: list[str]) -> int:
    names = available()
    if not argv or argv[0] not in names:
        print(f"usage: python -m bench {{{','.join(names)}}} [args]", file=sys.stderr)
        return 2
    module = importlib.import_module(f"bench.{argv[0]}")
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
