"""The scheduling recipes of ``deploy/``, each checked for real.

- Scrapyd: a real ``scrapyd`` on 127.0.0.1 in a temporary folder; the project is
  deployed with ``deploy/scrapyd_deploy.py`` (``scrapyd-deploy`` in a scratch copy, so
  the checkout gains no ``setup.py``), a crawl is scheduled with ``schedule.json``
  through a replay archive, ``listjobs.json`` is polled until the job finishes, and
  the stored rows are counted. Skipped only when scrapyd or scrapyd-client is not
  installed (``deploy/requirements.txt``).
- systemd: the service and timer pass ``systemd-analyze verify`` (skipped where it
  does not exist), with the checkout path pointed at a stub ``scrapy``.
- cron: the crontab line is a valid five-field schedule running ``scrapy nightly``.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from newsspider.nightly.lock import EXIT_LOCKED
from newsspider.storage import Article, CrawlRun, engine_for
from tests.pgserver import free_port
from tests.test_nightly import build_archive, site_pages

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
UNITS = ("newsspider-nightly.service", "newsspider-nightly.timer")


# -- Scrapyd ----------------------------------------------------------------------------------


class Scrapyd:
    """A scrapyd process; ``url`` once it listens, its output kept for failure messages."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.lines: list[str] = []
        self.listening = threading.Event()
        (home / "scrapyd.conf").write_text(
            "[scrapyd]\n"
            "bind_address = 127.0.0.1\n"
            f"http_port = {self.port}\n"
            "poll_interval = 0.1\n"
            "max_proc = 1\n"
            f"eggs_dir = {home / 'eggs'}\n"
            f"logs_dir = {home / 'logs'}\n"
            f"dbs_dir = {home / 'dbs'}\n"
            "items_dir =\n",
            "utf-8",
        )
        env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
        # scrapyd reads ./scrapyd.conf; home has no scrapy.cfg above it to mix in.
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scrapyd"],
            cwd=home,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if f"Site starting on {self.port}" in line:
                self.listening.set()

    def output(self) -> str:
        return "".join(self.lines[-60:])

    def get(self, endpoint: str, **params: str) -> dict:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{endpoint}?{query}", timeout=30) as r:
            return json.load(r)

    def post(self, endpoint: str, data: list[tuple[str, str]]) -> dict:
        body = urllib.parse.urlencode(data).encode()
        with urllib.request.urlopen(f"{self.url}{endpoint}", data=body, timeout=60) as r:
            return json.load(r)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)


@pytest.fixture
def scrapyd(tmp_path: Path) -> Iterator[Scrapyd]:
    pytest.importorskip("scrapyd", reason="scrapyd is not installed (deploy/requirements.txt)")
    pytest.importorskip(
        "scrapyd_client", reason="scrapyd-client is not installed (deploy/requirements.txt)"
    )
    home = tmp_path / "scrapyd"
    home.mkdir()
    server = Scrapyd(home)
    try:
        if not server.listening.wait(timeout=60):
            pytest.fail(f"scrapyd did not start:\n{server.output()}")
        yield server
    finally:
        server.stop()


def test_scrapyd_deploy_schedule_and_store(scrapyd, tmp_path, datasets):
    top_level = sorted(os.listdir(REPO))
    deploy = subprocess.run(
        [sys.executable, str(DEPLOY / "scrapyd_deploy.py"), "--url", scrapyd.url, "-v", "1"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert deploy.returncode == 0, deploy.stdout + deploy.stderr + scrapyd.output()
    assert json.loads(deploy.stdout)["status"] == "ok", deploy.stdout
    assert sorted(os.listdir(REPO)) == top_level  # no setup.py, build/ or egg-info left here

    pages = site_pages("netease")
    archive = build_archive(tmp_path, "scrapyd", pages)
    database_url = f"sqlite:///{tmp_path / 'corpus.db'}"
    scheduled = scrapyd.post(
        "schedule.json",
        [
            ("project", "newsspider"),
            ("spider", "netease"),
            ("setting", f"REPLAY_ARCHIVE={archive}"),
            ("setting", f"DATABASE_URL={database_url}"),
            ("setting", "NEWS_DB_BATCH=5"),
            ("setting", "DOWNLOAD_DELAY=0"),
            ("setting", "AUTOTHROTTLE_ENABLED=False"),
        ],
    )
    assert scheduled["status"] == "ok", (scheduled, scrapyd.output())
    job = scheduled["jobid"]

    deadline = time.monotonic() + 180
    while True:  # poll the job's state, with short waits, until it is finished
        jobs = scrapyd.get("listjobs.json", project="newsspider")
        if any(j["id"] == job for j in jobs["finished"]):
            break
        assert time.monotonic() < deadline, (jobs, scrapyd.output())
        time.sleep(0.1)
    log = (scrapyd.home / "logs" / "newsspider" / "netease" / f"{job}.log").read_text("utf-8")
    assert "Spider closed (finished)" in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]

    with Session(engine_for(database_url)) as s:
        assert sorted(s.scalars(select(Article.url))) == sorted(p.url for p in pages)
        run = s.scalars(select(CrawlRun)).one()
        assert (run.site, run.status, run.items_new) == ("netease", "finished", len(pages))


# -- systemd ----------------------------------------------------------------------------------


def test_systemd_units_verify(tmp_path):
    service = configparser.ConfigParser(interpolation=None, strict=False)
    service.read(DEPLOY / "systemd" / UNITS[0], encoding="utf-8")
    assert service["Service"]["ExecStart"].endswith("/scrapy nightly")
    assert str(EXIT_LOCKED) in service["Service"]["SuccessExitStatus"].split()
    timer = configparser.ConfigParser(interpolation=None, strict=False)
    timer.read(DEPLOY / "systemd" / UNITS[1], encoding="utf-8")
    assert timer["Timer"]["OnCalendar"]

    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # verify checks that ExecStart exists: point the checkout path at a stub.
    checkout = tmp_path / "srv"
    (checkout / ".venv" / "bin").mkdir(parents=True)
    (checkout / "data").mkdir()
    stub = checkout / ".venv" / "bin" / "scrapy"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    units = tmp_path / "units"
    units.mkdir()
    for name in UNITS:
        text = (DEPLOY / "systemd" / name).read_text("utf-8")
        (units / name).write_text(text.replace("/srv/newsspider", str(checkout)), "utf-8")
    proc = subprocess.run(
        [analyze, "verify", "--man=no", *(str(units / n) for n in UNITS)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert not [line for line in output.splitlines() if "newsspider" in line], output


# -- cron -------------------------------------------------------------------------------------

_FIELD = re.compile(r"^(\*|\d+(-\d+)?)(/\d+)?(,(\d+(-\d+)?)(/\d+)?)*$")
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))


def test_crontab_runs_nightly_once_a_night():
    jobs = [
        line
        for line in (DEPLOY / "crontab").read_text("utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
        and not re.match(r"^[A-Z_]+=", line)  # environment lines
    ]  # fmt: skip
    assert len(jobs) == 1, jobs
    fields = jobs[0].split(None, 5)
    for value, (low, high) in zip(fields[:5], _RANGES, strict=True):
        assert _FIELD.match(value), value
        assert all(low <= int(n) <= high for n in re.findall(r"\d+", value.split("/")[0])), value
    assert fields[2:5] == ["*", "*", "*"]  # every day
    assert re.search(r"\bscrapy nightly\b", fields[5]), fields[5]


def test_scrapyd_conf_listens_on_loopback_only():
    conf = configparser.ConfigParser(interpolation=None)
    conf.read(DEPLOY / "scrapyd" / "scrapyd.conf", encoding="utf-8")
    assert conf["scrapyd"]["bind_address"] == "127.0.0.1"
