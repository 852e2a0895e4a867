"""Sessions: a sender and a receiver measuring a scheme over a socket (loopback or remote)."""

#: The port `cryptobench serve` listens on unless told otherwise. Here rather than in
#: `server` so that the CLI's help and the window's Server field read it without
#: loading the server and its receiver.
DEFAULT_PORT = 7979
