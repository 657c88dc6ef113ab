"""The CLI: `python -m backend serve | migrate | index | trial-words | create-user NAME [--admin] |
schema [--out PATH] | eval criteria …`."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path

from backend.config import get_settings


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["eval"]:
        from backend.eval.cli import main as eval_main
        return eval_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m backend")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the web app")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--timeout-graceful-shutdown", type=float, default=None, metavar="SECONDS",
                       help="on SIGTERM, how long open requests may take to end before they are cancelled "
                            "(default: COLLEAGUE_DRAIN_SECONDS less a margin for the exit)")
    sub.add_parser("migrate", help="upgrade the database schema to the latest version")
    sub.add_parser("index", help="build the offline corpus's search index now (else the first search does)")
    sub.add_parser("trial-words", help="recount the words of the offline corpus's trials for the screening's "
                                       "relevance (kept in the repository; after the corpus changes)")
    create = sub.add_parser("create-user", help="create a user (asks for the password)")
    create.add_argument("username")
    create.add_argument("--admin", action="store_true")
    create.add_argument("--password", help="non-interactive; prefer the prompt or COLLEAGUE_PASSWORD")
    schema = sub.add_parser("schema", help="write the OpenAPI document the frontend's types are generated from")
    schema.add_argument("--out", help="where to write it (default: frontend/src/api/openapi.json; - for stdout)")
    sub.add_parser("eval", help="evaluation harnesses: python -m backend eval criteria --help")
    args = parser.parse_args(argv)
    settings = get_settings()

    if args.command == "serve":
        import uvicorn

        from backend.db.migrate import upgrade
        from backend.observability.logs import uvicorn_log_config
        from backend.observability.metrics import multiprocess_dir, remove_multiprocess_dir
        upgrade(settings.database_url)  # once, before any worker starts: a fresh database works at once
        graceful = args.timeout_graceful_shutdown
        graceful = settings.graceful_seconds if graceful is None else graceful
        metrics_dir = multiprocess_dir(args.workers)  # before a worker imports prometheus_client
        try:
            uvicorn.run("backend.main:app", host=args.host, port=args.port, workers=args.workers,
                        timeout_graceful_shutdown=graceful,  # type: ignore[arg-type]  # (annotated int; any float works)
                        log_config=uvicorn_log_config(settings.log_format, settings.log_level))
        finally:
            remove_multiprocess_dir(metrics_dir)
        return 0
    if args.command == "migrate":
        from backend.db.migrate import upgrade
        upgrade(settings.database_url)
        print(f"database is at the latest schema ({settings.database_url.split('@')[-1]})")
        return 0
    if args.command == "index":
        from backend.sources.offline import open_index
        index = open_index()
        how = f"built in {index.build_seconds:.1f} s" if index.build_seconds else "up to date"
        print(f"offline index {how}: {len(index.trials)} trials, {len(index.articles)} articles ({index.path})")
        return 0
    if args.command == "trial-words":
        from backend.screening.trial_words import write_table
        print(write_table())
        return 0
    if args.command == "schema":
        from backend.schema_export import COMMITTED, openapi_document, render
        if args.out == "-":
            sys.stdout.write(render(openapi_document()))
            return 0
        out = Path(args.out) if args.out else COMMITTED
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render(openapi_document()), encoding="utf-8")
        print(f"wrote {out}")
        return 0
    if args.command == "create-user":
        from backend.auth.service import check_password, create_user
        from backend.db.session import Database
        from backend.errors import AppError
        password = args.password or os.environ.get("COLLEAGUE_PASSWORD") or getpass.getpass("Password: ")
        role = "admin" if args.admin else "user"
        try:
            check_password(password, role)
        except AppError as err:
            print(f"error: {err.detail}", file=sys.stderr)
            return 1
        db = Database(settings.database_url)
        try:
            with db.session() as s:
                user = create_user(s, args.username, password, role)
                print(f"created {user.role} {user.username!r} (id {user.id})")
        except AppError as err:
            print(f"error: {err.detail}", file=sys.stderr)
            return 1
        finally:
            db.dispose()
        return 0
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
