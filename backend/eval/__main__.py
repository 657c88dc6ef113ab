"""`python -m backend.eval criteria ...` (the same as `python -m backend eval criteria ...`)."""

import sys

from backend.eval.cli import main

raise SystemExit(main(sys.argv[1:]))
