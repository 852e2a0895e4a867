"""Emulated links: a delay line per direction between a loopback sender and receiver.

`presets` turns a profile job's "link" into the `Link` it runs with, `probe` says which
emulation this machine offers; `delay_line` is the arithmetic (serialization at the
rate, one-way delay, jitter that never reorders), `relay` the link process that moves
the bytes through it, `timeouts` how far a session's waits stretch over the link.
"""
