"""Emulated links: the packet path (a TUN device per namespace, `packet_link`,
`packet_line`, `path_counters`) and the stream relay (`relay`, `delay_line`, `shared`);
`probe` says which emulation this machine offers, `timeouts` how far a session's waits
stretch over a link, `wire_time` how long a job's bytes take on it.
"""
