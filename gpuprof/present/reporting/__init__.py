"""Assemble the Report (plain, versioned data) from a Run record; every renderer reads this."""
