"""`cryptobench serve`: the far end of remote jobs, a receiver (or a load server) per
authenticated job, started from the command line and run until stopped."""

#: The port `cryptobench serve` listens on unless told otherwise. Here rather than in
#: `server` so that the CLI's help and the window's Server field read it without
#: loading the server and its receiver.
DEFAULT_PORT = 7979

#: What docs/remote.md promises of `serve` about the clients it serves, kept here once (the
#: page is tested against these): a connection finishes the token handshake within
#: `HELLO_S` however it paces its bytes, and a client silent for `CLIENT_SILENCE_S` during
#: its job is dropped, whatever the job waits on: a frame on its connection, or, in a load
#: job, a request from its generators to the load server. The next client then has its turn.
HELLO_S = 10.0
CLIENT_SILENCE_S = 120.0
