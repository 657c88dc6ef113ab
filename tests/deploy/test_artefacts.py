"""The deployment artefacts agree with each other and with what the multi-instance harness runs (this
machine has no container daemon): compose.yaml's app services run the Dockerfile's command, which is the
harness's `python -m backend serve` with another address; their settings are settings the app reads; nginx's
upstream is compose's app services; nginx accepts deploy/nginx.conf, and the harness changes nothing in it
but the listen port and the upstream's servers; the systemd unit runs the same command per port."""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import yaml

from backend.config import Settings
from backend.main import create_app
from tests.conftest import make_settings
from tests.deploy.cluster import NGINX_CONF, Instance, nginx_executable, render_nginx_conf
from tests.live_server import ROOT

UVICORN_ENV = {"FORWARDED_ALLOW_IPS"}  # read by uvicorn itself (trusted proxies for X-Forwarded-For)
APP_SERVICES = ("app1", "app2")


def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) per instruction, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def serve_args(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """`python -m backend serve …` without the interpreter's path, and its --host/--port values apart."""
    assert Path(argv[0]).name.startswith("python"), argv
    rest, options = [], {}
    args = iter(argv[1:])
    for arg in args:
        if arg in ("--host", "--port"):
            options[arg] = next(args)
        else:
            rest.append(arg)
    return rest, options


def test_compose_runs_the_harness_command_and_the_images_own(tmp_path: Path) -> None:
    services = compose()["services"]
    assert set(services) == {"db", *APP_SERVICES, "nginx"}
    harness, harness_addr = serve_args(Instance("postgresql+psycopg://x@h/d", "http://m", tmp_path, "a").command())
    cmd = next(json.loads(args) for op, args in dockerfile() if op == "CMD")
    image, image_addr = serve_args(cmd)
    assert image == harness == ["-m", "backend", "serve"]
    assert image_addr["--host"] == "0.0.0.0" and harness_addr["--host"] == "127.0.0.1"
    for name in APP_SERVICES:
        assert services[name]["command"] == cmd
        assert services[name]["depends_on"]["db"]["condition"] == "service_healthy"
        assert "8000" in {args for op, args in dockerfile() if op == "EXPOSE"} and image_addr["--port"] == "8000"


def test_compose_settings_are_settings_the_app_reads(tmp_path: Path) -> None:
    services = compose()["services"]
    known = {field.alias for field in Settings.model_fields.values() if field.alias} | UVICORN_ENV
    harness = Instance("postgresql+psycopg://x@h/d", "http://m", tmp_path, "a").environment()
    db = services["db"]["environment"]
    names = set()
    for name in APP_SERVICES:
        env = services[name]["environment"]
        assert set(env) <= known, set(env) - known  # a misspelt setting would be ignored silently
        url = sa.engine.make_url(env["DATABASE_URL"])
        assert (url.drivername, url.host, url.port) == ("postgresql+psycopg", "db", 5432)
        assert (url.username, url.password, url.database) == (db["POSTGRES_USER"], db["POSTGRES_PASSWORD"],
                                                              db["POSTGRES_DB"])
        names.add(url.query["application_name"])  # each instance's connections named, as the harness's are
        assert env["COLLEAGUE_SOURCES"] == harness["COLLEAGUE_SOURCES"]
        make_settings(env["DATABASE_URL"], **{k: v for k, v in env.items() if k in known - UVICORN_ENV})
    assert len(names) == len(APP_SERVICES)
    assert "application_name" in sa.engine.make_url(Instance("postgresql+psycopg://x@h/d", "http://m", tmp_path,
                                                             "a").database_url).query


def test_nginx_fronts_the_app_services_with_this_config() -> None:
    services = compose()["services"]
    conf = NGINX_CONF.read_text()
    upstream = re.search(r"upstream colleague \{(.*?)\n    \}", conf, re.S)
    assert upstream is not None
    assert re.findall(r"^\s*server (\S+)", upstream.group(1), re.M) == [f"{name}:8000" for name in APP_SERVICES]
    assert "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro" in services["nginx"]["volumes"]
    assert services["nginx"]["ports"] == ["8080:8080"] and re.search(r"\blisten 8080;", conf)
    for name in APP_SERVICES:
        assert services["nginx"]["depends_on"][name]["condition"] == "service_healthy"


def test_the_harness_changes_only_the_listen_port_and_the_upstream_servers() -> None:
    original = NGINX_CONF.read_text().splitlines()
    rendered = render_nginx_conf(18080, ["127.0.0.1:18001", "127.0.0.1:18002", "127.0.0.1:18003"]).splitlines()
    changed = [line for line in difflib.unified_diff(original, rendered, lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed and all(re.fullmatch(r"[+-]\s*(listen \S+;|server \S+ max_fails=\d+ fail_timeout=\d+s;)", line)
                           for line in changed), changed
    assert sum(line.startswith("+") and "server 127.0.0.1:1800" in line for line in changed) == 3


def test_nginx_accepts_the_config(tmp_path: Path) -> None:
    nginx = nginx_executable()
    if nginx is None:
        if os.environ.get("CI"):
            pytest.fail("nginx is missing in CI (`make nginx` installs it)")
        pytest.skip("nginx is not installed (`make nginx`)")
    conf = tmp_path / "nginx.conf"
    conf.write_text(render_nginx_conf(18080, ["127.0.0.1:18001", "127.0.0.1:18002"]))
    r = subprocess.run([nginx, "-t", "-c", str(conf), "-p", str(tmp_path), "-e", str(tmp_path / "error.log"),
                        "-g", f"pid {tmp_path / 'nginx.pid'};"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


def test_the_dockerfile_builds_the_frontend_and_the_index_and_runs_unprivileged() -> None:
    steps = dockerfile()
    stages = [args for op, args in steps if op == "FROM"]
    assert stages[0].startswith("node:") and stages[0].endswith(" AS frontend") and len(stages) >= 2
    final = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM"):]
    runs = [(i, args) for i, (op, args) in enumerate(final) if op == "RUN"]
    user = next(i for i, (op, args) in enumerate(final) if op == "USER")
    assert final[user][1] not in ("root", "0")
    assert any("--from=frontend" in args and "frontend/dist" in args for op, args in final if op == "COPY")
    assert any(args == "npm run build" for op, args in steps if op == "RUN")
    assert [i for i, args in runs if args == "python -m backend index"][0] > user  # the index, as the app's user
    health = next(args for op, args in final if op == "HEALTHCHECK")
    path = re.search(r"http://127\.0\.0\.1:8000(/api/\S+?)'", health)
    assert path is not None and path.group(1) == "/api/health/live"
    routes = {getattr(route, "path", "") for route in create_app(make_settings("sqlite://")).routes}
    assert path.group(1) in routes
    assert compose()["x-app"]["healthcheck"]["test"][1:] == json.loads(health.split("CMD", 1)[1])


def test_the_systemd_unit_runs_one_instance_per_port() -> None:
    unit = (ROOT / "deploy" / "colleague@.service").read_text()
    exec_start = re.search(r"^ExecStart=(.+)$", unit, re.M)
    assert exec_start is not None
    rest, options = serve_args(shlex.split(exec_start.group(1)))
    assert rest == ["-m", "backend", "serve"] and options == {"--host": "127.0.0.1", "--port": "%i"}
    assert re.search(r"^KillSignal=SIGTERM$", unit, re.M) and re.search(r"^User=(?!root)\w+", unit, re.M)
