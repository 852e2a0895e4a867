"""A job's processes: how they start (`jobstart`, the preloaded fork server), that every
wait on them is bounded (`deadlines`), that a stopped one is killed (`watchdog`), that they
end with their parent (`lifeline`), and the fork server's own guard."""
