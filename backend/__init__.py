"""Colleague: the chat tray beside Tablizer and TrialScout."""
