"""The command line: the headless face of CryptoBench over the same runner as the window.

`main` builds the parser from `commands` (one module per command: its parser and its
handler); `common` holds what commands share (exit codes, the usage error, opening the
store, loading a run); `terminal` is everything about printing (the console, tables and
lines, streams that survive a closed pipe, stop signals); `exports` checks and writes
the files a command was asked for.
"""
