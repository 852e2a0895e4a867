"""What many tests share: builders of runs, jobs and stores, golden files, pixel checks."""
