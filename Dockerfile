# syntax=docker/dockerfile:1
# Colleague in one image (README "Deployment"): the frontend built with node, the Python app in a virtual
# environment, and the offline corpus's search index built into the image, so no instance builds its own
# 360 MB index at start. Runs as a non-root user; `docker stop` sends SIGTERM, on which the instance turns
# unready, closes its listener, asks its streams to resume elsewhere and saves their turns.
#
#   docker build -t colleague .      (or: docker compose up --build)

# ---- the frontend ---------------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS frontend
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# ---- the Python app and its dependencies ----------------------------------------------------------------
FROM python:3.11-slim-bookworm AS python
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
COPY pyproject.toml ./
COPY backend/ backend/
# Editable: the app finds alembic.ini, migrations/, frontend/dist and var/ beside backend/ (PROJECT_ROOT).
RUN pip install -e .

# ---- the image ------------------------------------------------------------------------------------------
FROM python:3.11-slim-bookworm
RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin colleague
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 COLLEAGUE_LOG_FORMAT=json
WORKDIR /app
COPY --from=python /opt/venv /opt/venv
COPY --from=python /app /app
COPY alembic.ini ./
COPY migrations/ migrations/
COPY --from=frontend /src/frontend/dist frontend/dist
RUN mkdir var && chown colleague:colleague var
USER colleague
# The offline index, built now (the data is in backend/sources/offline/data): every instance starts with it.
RUN python -m backend index
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/health/live', timeout=2)"]
STOPSIGNAL SIGTERM
# One process per container: scale with more containers (compose.yaml), not --workers (README).
CMD ["python", "-m", "backend", "serve", "--host", "0.0.0.0", "--port", "8000"]
