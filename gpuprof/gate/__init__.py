"""The CI performance gate: pure threshold and baseline decisions over saved reports."""
