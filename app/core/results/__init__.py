"""What a run produced and where it is kept.

`model` is the result model and its JSON/CSV contract (`JobResult`, `RunResult`,
`load_results_file`); `job_records`, `job_conditions` and `job_tcp_info` the typed parts
of a job's result (CPU, memory; link, placement, load steps; TCP_INFO); `check` validates results read back from a file
or the store, field by field; `store` is the SQLite history; `importing` adds a results
file from another machine to it.
"""
