"""The machine a run measures on: what it is, what may disturb it, where jobs run on it.

`environment` records CPU, flags, OS, Python and libraries with every run; `preflight`
reads what makes timings unstable (governor, turbo, SMT, steal, load), each with its fix;
`placement` chooses and records the CPUs of a job's processes.
"""
