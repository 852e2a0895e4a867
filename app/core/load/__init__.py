"""Load mode: many client connections driven open-loop at one server on loopback.

`settings` reads a profile job's load fields, `framing` is what crosses the
connections, `server` and `generator` are the two processes, `sweep` plans the offered
rates and reads the knee from the steps.
"""
