"""The Starlette application: routes, the access token, headers and error pages.

Every route is ``GET`` (and ``HEAD``); any other method gets Starlette's 405. Pages are
Jinja2 templates with autoescaping on, so every stored string (titles, bodies, URLs: stored
pages are untrusted input) reaches the browser as text. A Content-Security-Policy allows
scripts from this server only (no inline script), so even a string that escaped escaping
would not run. Bad parameters get a 400 naming what is accepted; any other failure a
plain 500 without a traceback (``debug`` is never on).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.datastructures import URL, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

import newsspider.web.views as views
from newsspider.extraction.kinds import STORED
from newsspider.sites import SITES
from newsspider.storage import Corpus, Engine
from newsspider.storage.web_queries import has_column

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
TOKEN_COOKIE = "newsspider_token"
SECURITY_HEADERS = {
    # Scripts only from this server: no inline script, no eval; ECharts sets inline styles.
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Guard:
    """ASGI middleware: the security headers on every answer, and the token when one is set.

    With a token, a request passes with ``Authorization: Bearer <token>``, the cookie, or
    ``?token=<token>``; an HTML page opened with ``?token=`` is redirected to the same URL
    without it and gets the cookie (HttpOnly, SameSite=Strict), so the token leaves the
    address bar and the history. Anything else gets a 401.
    """

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token or None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for k, v in SECURITY_HEADERS.items():
                    if k not in headers:
                        headers[k] = v
            await send(message)

        if self.token is not None:
            request = Request(scope)
            via_query = request.query_params.get("token", "")
            bearer = request.headers.get("authorization", "")
            given = [
                request.cookies.get(TOKEN_COOKIE, ""),
                bearer[7:] if bearer.lower().startswith("bearer ") else "",
                via_query,
            ]
            if not any(g and hmac.compare_digest(g.encode(), self.token.encode()) for g in given):
                response: Response = (
                    JSONResponse({"error": "a token is required"}, status_code=401)
                    if scope["path"].startswith("/api/")
                    else Response(
                        "401: open the address with ?token=<token> (scrapy corpus serve --token)",
                        status_code=401,
                        media_type="text/plain",
                    )
                )
                await response(scope, receive, send_with_headers)
                return
            if via_query and not scope["path"].startswith("/api/"):
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                target = URL(scope=scope).replace(query=urlencode(rest))
                redirect = RedirectResponse(
                    str(target.replace(scheme="", netloc="")) or "/", status_code=303
                )
                redirect.set_cookie(
                    TOKEN_COOKIE, via_query, httponly=True, samesite="strict", path="/"
                )
                await redirect(scope, receive, send_with_headers)
                return
        await self.app(scope, receive, send_with_headers)


def create_app(engine: Engine, *, token: str | None = None) -> ASGIApp:
    """The web view of the corpus on ``engine`` (give it a read-only engine:
    :func:`newsspider.storage.web_queries.readonly_engine`)."""
    corpus = Corpus(engine, setup=False)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.globals["SITES"] = list(SITES)
    templates.env.globals["DASHBOARD_DAYS"] = views.DASHBOARD_DAYS
    # Stories come with reprint detection (articles.story_id); without them the pages
    # show no story parts and /reprints says why.
    stories_on = has_column(engine, "articles", "story_id")
    templates.env.globals["STORIES"] = stories_on
    # Where articles came from (articles.archive, revision 0007); without the column every
    # article counts as fetched live.
    origins_on = has_column(engine, "articles", "archive")
    # What pages state about themselves (articles.origin..., revision 0008): without the
    # columns the search form has no filters for them and a filter given is a 400.
    records_on = has_column(engine, "articles", "origin")
    templates.env.globals["RECORDS"] = records_on
    # The page's kind (articles.kind, revision 0010): without it no kind filter.
    kinds_on = has_column(engine, "articles", "kind")
    templates.env.globals["KINDS"] = STORED if kinds_on else ()

    def params(request: Request) -> dict[str, str]:
        return {k: v for k, v in request.query_params.items() if k != "token"}

    def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
        return templates.TemplateResponse(request, name, context, status_code=status)

    def search_params(request: Request) -> dict[str, Any]:
        p = views.search_params(params(request))
        if p["filters"] and not records_on:
            raise views.BadParameter(
                f"{', '.join(p['filters'])}: this database has no such columns yet (schema "
                "revision 0008); any scrapy corpus command migrates it"
            )
        if "kind" in p["filters"] and not kinds_on:
            raise views.BadParameter(
                "kind: this database has no such column yet (schema revision 0010); any "
                "scrapy corpus command migrates it"
            )
        return p

    def search_page(request: Request) -> Response:
        p = search_params(request)
        result = views.search(corpus, engine, p, stories_on=stories_on)
        query = {k: v for k, v in params(request).items() if k != "page" and v}
        return page(
            request,
            "search.html",
            {
                "result": result,
                "prev_url": _with(query, result.page - 1) if result.page > 1 else None,
                "next_url": _with(query, result.page + 1) if result.has_more else None,
                "local_time": views.local_time,
            },
        )

    def search_api(request: Request) -> Response:
        p = search_params(request)
        return JSONResponse(views.search(corpus, engine, p, stories_on=stories_on).as_dict())

    def _article(request: Request) -> dict[str, Any]:
        article = corpus.get(views.article_id(request.path_params["article_id"]))
        if article is None:
            raise HTTPException(404, "no stored article with this id")
        return views.article_record(article, engine, stories_on=stories_on)

    def article_page(request: Request) -> Response:
        return page(request, "article.html", {"a": _article(request)})

    def article_api(request: Request) -> Response:
        return JSONResponse(_article(request))

    def _dashboard(request: Request) -> dict[str, Any]:
        days = int(views.param_choice(params(request), "days", views.DASHBOARD_DAYS))
        end = views.param_date(params(request), "end")
        return views.dashboard(engine, days, end=end, origins=origins_on)

    def dashboard_page(request: Request) -> Response:
        data = _dashboard(request)
        return page(request, "dashboard.html", {"d": data, "recent_runs": data["crawl_runs"]})

    def dashboard_api(request: Request) -> Response:
        return JSONResponse(_dashboard(request))

    def _reprints(request: Request) -> dict[str, Any]:
        if not stories_on:
            raise HTTPException(
                404, "no stories in this database yet: reprint detection (articles.story_id) "
                "has not been set up (scrapy corpus reprints)"
            )
        return views.reprints(engine)

    def reprints_page(request: Request) -> Response:
        return page(request, "reprints.html", {"r": _reprints(request)})

    def reprints_api(request: Request) -> Response:
        return JSONResponse(_reprints(request))

    async def bad_parameter(request: Request, exc: Exception) -> Response:
        return _error(request, 400, str(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return _error(request, exc.status_code, exc.detail, exc.headers)

    async def server_error(request: Request, exc: Exception) -> Response:
        logger.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return _error(request, 500, "internal error: the server log has the details")

    def _error(
        request: Request, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=status, headers=headers)
        if request.method not in ("GET", "HEAD"):
            return Response(message, status_code=status, media_type="text/plain", headers=headers)
        response = page(request, "error.html", {"status": status, "message": message}, status)
        if headers:
            response.headers.update(headers)
        return response

    routes = [
        Route("/", search_page, name="search"),
        Route("/article/{article_id}", article_page, name="article"),
        Route("/dashboard", dashboard_page, name="dashboard"),
        Route("/reprints", reprints_page, name="reprints"),
        Route("/api/search", search_api),
        Route("/api/reprints", reprints_api),
        Route("/api/article/{article_id}", article_api),
        Route("/api/dashboard", dashboard_api),
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(
        debug=False,
        routes=routes,
        exception_handlers={
            views.BadParameter: bad_parameter,
            HTTPException: http_error,
            Exception: server_error,
        },
    )
    app.state.corpus = corpus
    return Guard(app, token)


def _with(query: dict[str, str], page: int) -> str:
    return "/?" + urlencode({**query, "page": str(page)})
