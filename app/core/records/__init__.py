"""A job's typed records, plain data every floor above shares: `job_records` (CPU, memory,
validation, security), `job_conditions` (link, placement, load steps), `job_tcp_info`,
`link_path` (the packet path's counters), `recorded` (typed views of a run's environment
and profile), `placement_words` (a placement in words)."""
