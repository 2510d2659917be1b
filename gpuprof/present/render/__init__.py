"""Renderers: each turns the same Report dict into one output format."""
