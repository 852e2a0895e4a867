"""`cryptobench serve`: the far end of remote jobs, a receiver (or a load server) per
authenticated job, started from the command line and run until stopped."""

#: The port `cryptobench serve` listens on unless told otherwise. Here rather than in
#: `server` so that the CLI's help and the window's Server field read it without
#: loading the server and its receiver.
DEFAULT_PORT = 7979
