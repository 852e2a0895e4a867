"""Where runs are kept: `store` (SQLite or PostgreSQL, one code path), its queries, schema,
back ends, target and rows; `runlock` (which runs are still being written), `importing`,
`copying` (`store copy`) and `unstored` (a run its store failed to keep)."""
