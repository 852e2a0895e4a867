"""Running a profile: the runner that both faces call, and everything about a job's processes.

`runner` runs a profile's jobs in order and records each result; `supervisor` starts,
watches and stops one job's child processes; `jobstart` is how they start (a preloaded
fork server); `plan` is what a child is handed, `events` the typed messages that come
back and go on to the faces; `lifeline` ends a child with its parent; `runlock` tells a
running run from one whose process died.
"""
