# The two commands of the README: `make run` (the product on the embedded default) and `make test`.
# Every step installs what it needs, so both work on a fresh clone with only the package registries.

VENV := .venv
PY := $(VENV)/bin/python
FRONTEND_SOURCES := $(shell find frontend/src frontend/index.html frontend/vite.config.ts frontend/tsconfig.json -type f 2>/dev/null)

.PHONY: run test setup frontend chromium nginx lint types

run: setup frontend
	$(PY) -m backend migrate
	$(PY) -m backend index
	COLLEAGUE_DEMO=1 $(PY) -m backend serve --host 127.0.0.1 --port 8000

test: setup frontend chromium nginx lint
	cd frontend && npm test
	$(PY) -m backend index
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check backend tests migrations benchmarks
	$(VENV)/bin/mypy

# After changing a wire model: the OpenAPI document, then the frontend's types generated from it (both committed;
# `make test` fails while either is stale).
types: setup frontend/node_modules/.installed
	$(PY) -m backend schema
	cd frontend && npm run gen:types

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

frontend: frontend/dist/index.html

frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $@

frontend/dist/index.html: frontend/node_modules/.installed $(FRONTEND_SOURCES)
	cd frontend && npm run build

# Browser tests drive Debian's Chromium (never a downloaded browser build).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The multi-instance tests (tests/deploy) put Debian's nginx in front of two app processes, running
# deploy/nginx.conf as compose.yaml does. Installed only; the package's own service is not used.
nginx:
	@command -v nginx >/dev/null 2>&1 || test -x /usr/sbin/nginx || { \
	  echo "installing Debian nginx for the multi-instance tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null; }
