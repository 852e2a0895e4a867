"""Sessions: a sender and a receiver measuring a scheme over a socket (loopback or remote)."""
