"""What crosses a socket, below every mechanism that talks: `wire` (frames), `auth` (the
token proofs), `doorway` (admitting a job's own peers), `connect` (a tuned connection to a
remote target), `tcpinfo` (the kernel's TCP_INFO), `netns` (a job's network namespaces)."""
