"""Entry point: `python -m app` and the frozen executable.

`freeze_support()` must run first so that multiprocessing children of a frozen
build start as workers instead of as another copy of the app.
"""

import multiprocessing
import sys


def main() -> int:
    multiprocessing.freeze_support()
    from app.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
