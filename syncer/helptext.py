"""`sync --help` without importing click: the group's help text as click prints it, stored
in ``syncer/data/help.txt`` (written from click by ``tests/test_helptext.py`` under
``SYNC_UPDATE_GOLDEN=1``, and compared with click's own output there on every run).

Importing click costs about as much as starting Python, so a plain ``sync --help`` that
imported it could not start in much under twice the interpreter's own time. Only the group's
help is stored; any other argument list, a terminal narrower than the stored width, or a
program name long enough to wrap the usage line goes through click itself.
"""

from __future__ import annotations

import os
import sys

HELP_FILE = os.path.join(os.path.dirname(__file__), "data", "help.txt")
PROG = "{prog}"  # where the program's name goes in the stored text
# click's help width (``min(columns, 80) - 2``) on a terminal of 80 columns or more, and
# when stdout is no terminal (``shutil.get_terminal_size`` falls back to 80 columns).
WIDTH = 78
LONGEST_PROG = 20  # a usage line that still fits WIDTH with room to spare
HELP_ARGS = (["--help"], ["-h"])


def prog_name() -> str:
    """The program's name as usage lines show it: ``python -m syncer`` when run as a module,
    else the name of the script run (``sync``, ``cookbook-sync``). ``syncer.cli`` gives it
    to click too, so the stored help and click's own usage lines name the program alike."""
    main = sys.modules.get("__main__")
    package = getattr(main, "__package__", None)
    path = sys.argv[0] if sys.argv else ""
    if not package:
        return os.path.basename(path)
    name = os.path.splitext(os.path.basename(path))[0]
    module = package if name == "__main__" else f"{package}.{name}"
    return f"python -m {module.lstrip('.')}"


def stored_help(args: list[str], prog: str) -> str | None:
    """What ``prog ARGS`` prints when ``args`` asks for the group's help and the stored text
    is click's for this terminal; None when click has to print it."""
    if args not in HELP_ARGS or len(prog) > LONGEST_PROG:
        return None
    import shutil  # the width rule is click's: it asks shutil too

    if shutil.get_terminal_size().columns < WIDTH + 2:
        return None
    try:
        with open(HELP_FILE, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    return text.replace(PROG, prog, 1)
