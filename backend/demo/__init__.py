"""The demo model: a local, deterministic implementation of the Messages API (see transport.py)."""
