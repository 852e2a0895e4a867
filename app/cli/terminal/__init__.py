"""Everything the command line prints through: the console, tables and lines, streams.

`console` makes the rich console and escapes outside text; `printing` prints runs,
history and lists (a table on a terminal, one line per record in a pipe);
`load_printing` a load job's steps; `streams` keeps output from ever stopping the work
(closed pipes, lost terminals, legacy encodings); `signals` turns SIGINT, SIGTERM and
SIGHUP into a clean stop.
"""
