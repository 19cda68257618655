"""Cluster mode with real parts: Debian's redis-server, a throwaway PostgreSQL, worker processes.

Three worker processes crawl one replay archive of real saved pages (every dataset page
reused under distinct URLs of three bench sites, ``benchmarks/crawl_archive.py``) through
one Redis into one PostgreSQL; a single local process crawls the same archive into
another database. The stored corpus, the line table and the fetches must agree
(``benchmarks/cluster.py``'s :func:`compare`). The acceptance figure, 3,000 pages, is the
benchmark's (``python benchmarks/cluster.py --check``, docs/cluster.md); the test runs
the same check on :data:`PAGES` pages (``NEWSSPIDER_CLUSTER_PAGES=3000`` for the full one).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.pgserver import PgServer
from tests.redisserver import redis_server, redis_url  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"
#: Article pages of the archive: a few hundred keep the suite quick on two cores.
PAGES = int(os.environ.get("NEWSSPIDER_CLUSTER_PAGES", "300"))
SITES = 3


def load(name: str) -> ModuleType:
    """A benchmark script as a module (benchmarks/ is no package)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def new_database(server: PgServer, name: str) -> str:
    """A fresh, empty database on the test server; its SQLAlchemy URL."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(
        host=server.host, port=server.port, user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return server.url(name)


def query(url: str, statement: str) -> list[tuple[Any, ...]]:
    import psycopg

    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn) as conn:
        return list(conn.execute(statement).fetchall())


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load("cluster")


@pytest.fixture(scope="module")
def archive(bench: ModuleType, datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    work = tmp_path_factory.mktemp("cluster-archive")
    # 25 articles a list page: each site is a chain of list pages, handled by any worker.
    return bench.crawl_archive.build_archive(
        work, PAGES, sites=SITES, per_page=25, datasets=datasets, log=False
    )


#: No pruning, so the line table is a pure count and comparable between runs. Few
#: requests in flight per spider: replayed answers come back at once, and on a short crawl
#: a worker taking 16 at a time would leave little for the others to do.
EXACT = {"LINEHASH_PRUNE_EVERY": 0, "NEWS_DB_BATCH": 20, "CONCURRENT_REQUESTS": 4}


def test_three_workers_equal_one_process(
    bench: ModuleType,
    archive: Any,
    postgresql_server: PgServer,
    redis_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    single_db = new_database(postgresql_server, "cluster_single")
    cluster_db = new_database(postgresql_server, "cluster_three")
    [single] = bench.run_workers(
        1, archive, tmp_path / "single", database_url=single_db, redis_url=None,
        settings=EXACT, tag="single",
    )  # fmt: skip
    workers = bench.run_workers(
        3, archive, tmp_path / "cluster", database_url=cluster_db, redis_url=redis_url,
        settings=EXACT,
    )  # fmt: skip
    report = bench.compare(
        single, workers, single_db=single_db, cluster_db=cluster_db, pages=PAGES, sites=SITES
    )
    print(report)
    assert report["failures"] == []
    # The last worker out deleted the run's keys: Redis keeps no URL of a finished run.
    import redis

    assert redis.Redis.from_url(redis_url).keys("newsspider:bench*") == []


def test_without_redis_url_nothing_changes() -> None:
    """No ``REDIS_URL``: the settings are left as they were (a local crawl)."""
    from scrapy.settings import Settings

    from newsspider import settings as project
    from newsspider.cluster import enable_cluster

    settings = Settings()
    settings.setmodule(project, priority="project")
    before = settings.copy_to_dict()
    assert enable_cluster(settings) is False
    assert settings.copy_to_dict() == before
    assert "scrapy_redis" not in str(before.get("SCHEDULER"))


def test_unreachable_redis_is_a_user_error(tmp_path: Path) -> None:
    """A wrong ``REDIS_URL`` stops ``scrapy crawl`` before it starts: one line, status 2."""
    from tests.pgserver import free_port
    from tests.test_user_errors import assert_one_line_error, scrapy

    url = f"redis://127.0.0.1:{free_port()}/0"
    proc = scrapy("crawl", "netease", "-s", f"REDIS_URL={url}", db=f"sqlite:///{tmp_path / 'c.db'}",
                  timeout=300)  # fmt: skip
    assert_one_line_error(proc, f"cannot reach Redis at REDIS_URL={url}")


def test_worker_unit_verifies(tmp_path: Path) -> None:
    """deploy/cluster/newsspider-worker@.service passes ``systemd-analyze verify``."""
    import configparser

    unit = REPO / "deploy" / "cluster" / "newsspider-worker@.service"
    parsed = configparser.ConfigParser(interpolation=None, strict=False)
    parsed.read(unit, encoding="utf-8")
    assert "scrapy crawl %i" in parsed["Service"]["ExecStart"]
    assert "REDIS_URL" in parsed["Service"]["ExecStart"]
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    checkout = tmp_path / "srv"
    (checkout / ".venv" / "bin").mkdir(parents=True)
    (checkout / "data").mkdir()
    stub = checkout / ".venv" / "bin" / "scrapy"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    instance = tmp_path / "newsspider-worker@netease.service"
    instance.write_text(unit.read_text("utf-8").replace("/srv/newsspider", str(checkout)), "utf-8")
    proc = subprocess.run(
        [analyze, "verify", "--man=no", str(instance)], capture_output=True, text=True, timeout=120
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert not [line for line in output.splitlines() if "newsspider" in line], output


def test_a_seeder_whose_requests_the_others_took_did_its_part(redis_url: str) -> None:  # noqa: F811
    """The run's fetches are counted in Redis (heartbeats, then leaving), so a seeder that
    fetched nothing without failing exits 0 when the run fetched pages, 3 when it did not."""
    import redis

    from newsspider.cluster.connection import keys
    from newsspider.cluster.frontier import HEARTBEAT, JOIN, LEAVE
    from newsspider.extensions import joined_empty_queue

    r = redis.Redis.from_url(redis_url)
    k = keys("netease")
    run_keys = [k.workers, k.requests, k.dupefilter, k.run, k.fetched]
    join, beat, leave = (r.register_script(script) for script in (JOIN, HEARTBEAT, LEAVE))
    assert int(join(keys=run_keys, args=["a", 60, "run-a"])[0]) == 1  # a starts and seeds
    assert int(join(keys=run_keys, args=["b", 60, "run-b"])[0]) == 0  # b joins
    beat(keys=[k.workers, k.fetched], args=["b", 7])  # b fetched what a seeded
    assert [int(v) for v in leave(keys=run_keys, args=["a", 60, 0])] == [0, 7]
    assert [int(v) for v in leave(keys=run_keys, args=["b", 60, 9])] == [1, 9]
    assert r.exists(k.fetched) == 0  # the last one out deleted the count too

    assert joined_empty_queue({"cluster/seeder": 1, "cluster/run_fetched": 7})
    assert not joined_empty_queue({"cluster/seeder": 1, "cluster/run_fetched": 0})
    failed = {"newsspider/fetch_failed_reason/dns": 1}
    assert not joined_empty_queue({"cluster/seeder": 1, "cluster/run_fetched": 7} | failed)
    assert joined_empty_queue({"cluster/seeder": 0})
    assert not joined_empty_queue({})  # not a cluster worker: nothing fetched is an error
