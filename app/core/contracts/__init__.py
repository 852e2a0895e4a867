"""What the runner and every job body share: `plan` (what a measuring child is handed),
`events` (the typed messages that come back and go on to the faces)."""
