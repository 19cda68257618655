"""One domain's request rate and concurrency across three cluster workers, at a local server.

A local site (``tests/localserver.py``) lists :data:`ARTICLES` articles on ``/``. One
crawler alone, then three cluster workers through one Redis, crawl it with
``DOWNLOAD_DELAY`` :data:`DELAY` (AutoThrottle and the randomization of the delay off, so
the limit is exact). The server records the moment of every request: the three workers
together must not request faster than one crawler may, i.e. at most one request per
``DELAY`` over the crawl (first to last request: a busy machine can only make requests
late, never early, so no clock of the test decides the outcome). Then,
with slow answers and no delay, the requests the server works on at once never exceed
``CONCURRENT_REQUESTS_PER_DOMAIN`` across the three workers.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.localserver import Page, article_html, links_page, serve
from tests.pgserver import PgServer
from tests.redisserver import redis_server, redis_url  # noqa: F401 (fixtures)
from tests.test_cluster import load, new_database

ARTICLES = 40
DELAY = 0.4
SETTINGS = {
    "DOWNLOAD_DELAY": DELAY,
    "AUTOTHROTTLE_ENABLED": False,
    "RANDOMIZE_DOWNLOAD_DELAY": False,
    "ROBOTSTXT_OBEY": False,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    "CLUSTER_IDLE_CLOSE": 3.0,
}


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load("cluster")


def rate_figures(times: list[float]) -> dict[str, float]:
    """Requests per second over the crawl, and the smallest gap between two requests."""
    times = sorted(times)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    span = times[-1] - times[0]
    return {
        "requests": len(times),
        "span": span,
        "per_second": (len(times) - 1) / span,
        "min_gap": min(gaps),
        "mean_gap": span / (len(times) - 1),
    }


def test_three_workers_keep_one_crawlers_rate(
    bench: ModuleType,
    postgresql_server: PgServer,
    redis_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    routes = {"/": Page(links_page(*(f"/article/a{n}.html" for n in range(ARTICLES))))}
    routes.update(
        {f"/article/a{n}.html": Page(article_html(n).encode()) for n in range(ARTICLES)}
    )
    figures = {}
    for name, workers, redis in (("one crawler", 1, None), ("three workers", 3, redis_url)):
        with serve(routes) as server:
            results = bench.run_workers(
                workers, None, tmp_path / name.replace(" ", "-"),
                database_url=new_database(postgresql_server, f"rate_{workers}"),
                redis_url=redis, settings=SETTINGS, site_base=server.base, timeout=300,
            )  # fmt: skip
            times = [s.at for s in server.seen if s.path.startswith("/article/")]
            assert sorted(s.path for s in server.seen if s.path.startswith("/article/")) == sorted(
                f"/article/a{n}.html" for n in range(ARTICLES)
            )
        if workers == 3:
            assert all(r["pages"] > 0 for r in results), [r["pages"] for r in results]
        figures[name] = rate_figures(times)
    print(figures)
    one, three = figures["one crawler"], figures["three workers"]
    # The limit: one request per DOWNLOAD_DELAY over the crawl (5 % for timer slack: the
    # first request may leave a little late, which shortens the span).
    assert one["mean_gap"] >= 0.95 * DELAY, figures
    assert three["mean_gap"] >= 0.95 * DELAY, figures


SLOW_ARTICLES = 24
PER_DOMAIN = 2
#: Seconds the server takes for each article: requests overlap unless something stops them.
SLOW = 0.3
CONCURRENCY_SETTINGS = {
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "ROBOTSTXT_OBEY": False,
    "CONCURRENT_REQUESTS_PER_DOMAIN": PER_DOMAIN,
    "CLUSTER_IDLE_CLOSE": 3.0,
}


class InFlight:
    """A slow route that records how many requests the server is working on at once.

    A request counts from its arrival until just before its response is written: the
    next request of any worker can only leave after a response has arrived, so the
    largest count is never above the real concurrency, and a cluster that exceeds the
    limit shows it (the slow answers overlap by far more than any scheduling jitter).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def route(self, page: Page) -> Any:
        def handler(h: Any) -> None:
            with self.lock:
                self.now += 1
                self.peak = max(self.peak, self.now)
            h.server.stopping.wait(SLOW)
            with self.lock:
                self.now -= 1
            h.send_page(page)

        return handler


def test_three_workers_keep_one_crawlers_concurrency(
    bench: ModuleType,
    postgresql_server: PgServer,
    redis_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    flight = InFlight()
    routes: dict[str, Any] = {
        "/": Page(links_page(*(f"/article/a{n}.html" for n in range(SLOW_ARTICLES))))
    }
    for n in range(SLOW_ARTICLES):
        routes[f"/article/a{n}.html"] = flight.route(Page(article_html(n).encode()))
    with serve(routes) as server:
        results = bench.run_workers(
            3, None, tmp_path / "slots", database_url=new_database(postgresql_server, "slots_3"),
            redis_url=redis_url, settings=CONCURRENCY_SETTINGS, site_base=server.base,
            timeout=300,
        )  # fmt: skip
        fetched = sorted(s.path for s in server.seen if s.path.startswith("/article/"))
    assert fetched == sorted(f"/article/a{n}.html" for n in range(SLOW_ARTICLES))
    working = [r["pages"] for r in results if r["pages"] > 1]
    # More than one worker fetched articles (each alone could hold PER_DOMAIN at once)...
    assert len(working) >= 2, [r["pages"] for r in results]
    # ...and together they never held more than one crawler may.
    assert flight.peak <= PER_DOMAIN, flight.peak
    assert flight.peak == PER_DOMAIN  # and the limit was used, not undercut
