"""Load mode: many client connections driven open-loop at one server.

`framing` is what crosses the connections, `server` and `generator` are the two
processes, `job` runs a sweep, `sweep` plans the offered rates and reads the knee,
`verdict` says what the steps show; `remote` drives a server `serve` started, `merge`
and cluster/ place generators on many machines.
"""
