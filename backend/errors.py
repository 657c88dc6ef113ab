"""Application errors: the first of the three error families (see STYLE.md), and the one error body.

    AppError                      -> JSON ErrorBody {error, detail, errors?} with .status_code
     ├── BadRequest          400
     ├── Unauthorized        401
     ├── Forbidden           403
     ├── NotFound            404  (also: another user's object, never 403)
     ├── Conflict            409
     ├── InvalidInput        422
     ├── TooManyRequests     429  (a per-user quota; carries Retry-After)
     ├── Draining            503  (this instance restarts: try another; carries Retry-After)
     └── UpstreamError       502  (a live source answered badly)
          └── UpstreamUnavailable 503 (a live source timed out or is rate limiting us)

Model-facing errors never use these: they are tool results. Developer mistakes (a dangling registry
name, a bad setting) are plain exceptions raised at startup.

Every error response of the API has the shape `ErrorBody`: `error` a stable code (`not_found`,
`invalid_input`, `method_not_allowed`…), `detail` one sentence for people, and for invalid input `errors`,
one `{loc, msg}` per problem. `backend.main` renders AppErrors, request validation errors and Starlette's
HTTP errors (unknown route, 405, unparseable body) in it; routes declare it with `error_responses`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from http import HTTPStatus
from typing import Any

from pydantic import BaseModel, Field, ValidationError


class ErrorItem(BaseModel):
    """One problem with the input: where (`["query", "page_size"]`, `["body", "title"]`) and what."""

    loc: list[str | int]
    msg: str


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: str = Field(description="A stable code: not_found, invalid_input, forbidden, …")
    detail: str = Field(description="What went wrong, in a sentence for people")
    errors: list[ErrorItem] | None = Field(None, description="Invalid input only: each problem and where")


def error_items(errors: Iterable[Mapping[str, Any]], prefix: tuple[str, ...] = ()) -> list[ErrorItem]:
    """pydantic's `errors()` (from a ValidationError or RequestValidationError) as ErrorItems."""
    return [ErrorItem(loc=[*prefix, *(p if isinstance(p, int) else str(p) for p in e.get("loc", ()))],
                      msg=str(e.get("msg", ""))) for e in errors]


_PLACES = ("body", "query", "path", "header", "cookie")


def readable(items: Iterable[ErrorItem]) -> str:
    """One line for people, e.g. `page_size: Input should be less than or equal to 100; title: Field required`
    (the location's body/query/path prefix left out)."""
    parts = []
    for item in items:
        loc = item.loc[1:] if item.loc and item.loc[0] in _PLACES else item.loc
        where = ".".join(str(p) for p in loc)
        parts.append(f"{where}: {item.msg}" if where else item.msg)
    return "; ".join(parts) or "The input is not valid."


def error_code(status_code: int) -> str:
    """The `error` code of a bare HTTP status: 405 -> method_not_allowed."""
    try:
        return HTTPStatus(status_code).phrase.lower().replace(" ", "_").replace("-", "_")
    except ValueError:
        return "http_error"


def error_responses(*status_codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses=` declaring the ErrorBody for each status a route can answer with."""
    return {code: {"model": ErrorBody, "description": HTTPStatus(code).phrase} for code in status_codes}


class AppError(Exception):
    status_code = 500
    error = "internal_error"

    def __init_subclass__(cls, status: int | None = None, code: str | None = None, **kwargs: Any) -> None:
        """`class NotFound(AppError, status=404)`: its status and `error` code (the status's by default)."""
        super().__init_subclass__(**kwargs)
        if status is not None:
            cls.status_code, cls.error = status, code or error_code(status)

    def __init__(self, detail: str, errors: list[ErrorItem] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors

    def body(self) -> ErrorBody:
        return ErrorBody(error=self.error, detail=self.detail, errors=self.errors)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.detail!r})"

    def headers(self) -> dict[str, str]:
        """Extra response headers (the handler in main.py sends them)."""
        return {}


class BadRequest(AppError, status=400): ...


class Unauthorized(AppError, status=401): ...


class Forbidden(AppError, status=403): ...


class NotFound(AppError, status=404): ...


class Conflict(AppError, status=409): ...


class InvalidInput(AppError):
    status_code = 422
    error = "invalid_input"

    @classmethod
    def from_errors(cls, errors: Iterable[Mapping[str, Any]], prefix: tuple[str, ...] = ()) -> InvalidInput:
        """A pydantic ValidationError's `errors()` as one 422, located under `prefix` (e.g. ("query",))."""
        items = error_items(errors, prefix)
        return cls(readable(items), items)


@contextmanager
def invalid_input(prefix: tuple[str, ...] = ()) -> Iterator[None]:
    """A pydantic ValidationError raised inside the block leaves it as one `InvalidInput` (422), located under
    `prefix`: for models a route or tool builds from its input itself."""
    try:
        yield
    except ValidationError as exc:
        raise InvalidInput.from_errors(exc.errors(), prefix) from None


class TooManyRequests(AppError):
    status_code = 429
    error = "too_many_requests"

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = max(1, retry_after)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class Draining(AppError, status=503, code="unavailable"):
    """This instance is shutting down: a proxy passes the request to another (deploy/nginx.conf), a client
    retries it (`Connection: close`: on a new connection)."""

    def __init__(self, detail: str = "This server is restarting. Try again in a moment.") -> None:
        super().__init__(detail)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": "1", "Connection": "close"}


class UpstreamError(AppError, status=502, code="upstream_error"): ...


class UpstreamUnavailable(UpstreamError, status=503, code="upstream_unavailable"): ...


def describe_validation_error(exc: ValidationError) -> str:
    """A pydantic ValidationError as one readable line (what a tool call with bad input tells the model)."""
    return readable(error_items(exc.errors(include_url=False)))
