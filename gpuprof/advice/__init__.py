"""Advice: the catalogue of fixes, each with when it applies and how its gain is estimated."""
