"""Saved views of Tablizer and TrialScout (`/api/views/...`)."""
