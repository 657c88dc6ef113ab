"""Application errors: the first of the three error families (see STYLE.md).

    AppError                      -> JSON {error, detail} with .status_code
     ├── BadRequest          400
     ├── Unauthorized        401
     ├── Forbidden           403
     ├── NotFound            404  (also: another user's object, never 403)
     ├── Conflict            409
     ├── InvalidInput        422
     ├── TooManyRequests     429  (a per-user quota; carries Retry-After)
     └── UpstreamError       502  (a live source answered badly)
          └── UpstreamUnavailable 503 (a live source timed out or is rate limiting us)

Model-facing errors never use these: they are tool results. Developer mistakes (a dangling registry
name, a bad setting) are plain exceptions raised at startup.
"""

from __future__ import annotations

from pydantic import ValidationError


class AppError(Exception):
    status_code = 500
    error = "internal_error"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.detail!r})"

    def headers(self) -> dict[str, str]:
        """Extra response headers (the handler in main.py sends them)."""
        return {}


class BadRequest(AppError):
    status_code = 400
    error = "bad_request"


class Unauthorized(AppError):
    status_code = 401
    error = "unauthorized"


class Forbidden(AppError):
    status_code = 403
    error = "forbidden"


class NotFound(AppError):
    status_code = 404
    error = "not_found"


class Conflict(AppError):
    status_code = 409
    error = "conflict"


class InvalidInput(AppError):
    status_code = 422
    error = "invalid_input"


class TooManyRequests(AppError):
    status_code = 429
    error = "too_many_requests"

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = max(1, retry_after)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class UpstreamError(AppError):
    status_code = 502
    error = "upstream_error"


class UpstreamUnavailable(UpstreamError):
    status_code = 503
    error = "upstream_unavailable"


def describe_validation_error(exc: ValidationError) -> str:
    """A pydantic ValidationError as one readable line: `field.path: message; …` (tools and HTTP alike)."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error.get("loc", ()))
        parts.append(f"{where}: {error['msg']}" if where else error["msg"])
    return "; ".join(parts)
