"""Entry point: `python -m app` and the frozen executable.

No arguments open the desktop window; any argument is a command-line command.
`freeze_support()` must run first so that multiprocessing children of a frozen
build start as workers instead of as another copy of the app.
"""

import multiprocessing
import sys


def main() -> int:
    multiprocessing.freeze_support()
    if len(sys.argv) == 1:  # no command: the desktop window
        from app.gui.preflight import check

        problem = check()  # before Qt is imported: no display or a missing library aborts Qt
        if problem is not None:
            print(f"cryptobench: error: {problem.message}", file=sys.stderr)
            return 2
        from app.gui.app import main as gui_main

        return gui_main()
    from app.cli.main import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
