"""Commands: what a user types — the CLI (cli) over the workflows of run, try and compare
(workflows, experiments), and the features with their own command: tune, doctor, attach and the
notebook magic."""
