"""Running a profile: `runner` runs a profile's jobs in order and records each result;
`supervisor` starts, watches and stops one job's child processes; `estimate` says how long
a run will take; `child_failures` puts a process's failure in words.
"""
