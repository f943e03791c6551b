"""Committed parser modules compiled from the built-in templates. Never edited by hand."""
