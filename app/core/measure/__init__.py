"""Taking a figure: clocks and batches, the resource sampler, and the measuring loop.

`timing` times a call or a batch (perf_counter_ns, the collector off, calibrated
batches); `sampler` reads CPU and RSS of a job's processes from the supervisor;
`harness` is the loop every measuring child shares (warm-up rounds, validation,
tampering, traced memory, the child's entry point); `ops` is operations mode's child.
"""
