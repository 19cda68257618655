"""Progress on long work (newsspider/progress.py): a bar on a terminal, nothing in a log.

Real command lines run in child processes with stderr on a pseudo-terminal (``pty``, with a
window size, as a terminal has) and again with stderr redirected to a file: on the terminal
the bar or status line must show its count (and total), rate and figures; in the file there
must be no bar and no control character at all. Crawls replay a WARC archive of the demo's
saved Sina pages (shipped in the repository), so nothing touches the network. The library
loops report through a ``progress`` callable, checked here to add up to the totals the
commands give their bars.
"""

from __future__ import annotations

import ast
import fcntl
import logging
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

import newsspider.progress as progress_module
import newsspider.settings as project_settings
from newsspider.demo import PAGES
from newsspider.evaluation import count_cases, evaluate, pass_count
from newsspider.extraction.registry import get_extractor
from newsspider.progress import CrawlProgress, crawl_figures, logs_above_bars, progress_bar
from newsspider.replay import build_warc
from newsspider.settings import PROGRESS_LOG_INTERVAL
from newsspider.storage import Corpus, engine_for, reclean_plan, reclean_sites
from newsspider.training import dataset_samples, train_site

REPO = Path(__file__).resolve().parents[1]
SINA = PAGES / "sina"
START = "https://news.sina.com.cn/replay/start.html"
#: Local replayed crawls: no politeness delays, extraction in the reactor thread.
FAST = ("DOWNLOAD_DELAY=0", "AUTOTHROTTLE_ENABLED=False", "EXTRACTION_WORKERS=0")
#: A log record's start: "2026-01-02 03:04:05 [logger] LEVEL: ..."
LOG_RECORD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[[\w.]+\] [A-Z]+: ")
#: Any control character but the newline: no \r, no escape sequence in a log.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def environment(db: str | None) -> dict[str, str]:
    """The child's environment: the test's database, and nothing that sizes or turns off tqdm."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "COLUMNS", "LINES") and not k.startswith("TQDM_")
    }
    if db is not None:
        env["DATABASE_URL"] = db
    return env


def on_terminal(
    *args: str, db: str | None = None, stdout_too: bool = False, timeout: float = 300
) -> tuple[int, str, str]:
    """Run ``scrapy ARGS`` with stderr on a pseudo-terminal of 160 columns.

    Returns the exit status, what the terminal received (stderr, and stdout with
    ``stdout_too``) and stdout otherwise. The terminal is read until every process holding
    it has closed it (EIO), or the command has ended and it stays quiet.
    """
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "scrapy.cmdline", *args],
            cwd=REPO,
            env=environment(db),
            stdin=subprocess.DEVNULL,
            stdout=slave if stdout_too else out,
            stderr=slave,
        )
        os.close(slave)
        chunks: list[bytes] = []
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([master], [], [], 1.0)
                if ready:
                    try:
                        data = os.read(master, 65536)
                    except OSError:  # EIO: the last holder of the terminal closed it
                        break
                    if not data:
                        break
                    chunks.append(data)
                elif proc.poll() is not None:
                    break
            else:
                proc.kill()
                pytest.fail(f"scrapy {' '.join(args)} did not end within {timeout}s")
            status = proc.wait(timeout=60)
        finally:
            os.close(master)
        out.seek(0)
        stdout = out.read().decode("utf-8", "replace")
    return status, b"".join(chunks).decode("utf-8", "replace"), stdout


def redirected(
    *args: str, db: str | None = None, tmp_path: Path, timeout: float = 300
) -> tuple[int, str, str]:
    """Run ``scrapy ARGS`` with stderr redirected to a file, as cron or systemd would."""
    log = tmp_path / "stderr.log"
    with open(log, "wb") as err:
        done = subprocess.run(
            [sys.executable, "-m", "scrapy.cmdline", *args],
            cwd=REPO,
            env=environment(db),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            timeout=timeout,
        )
    return done.returncode, log.read_text("utf-8"), done.stdout.decode("utf-8", "replace")


def assert_clean_log(text: str) -> None:
    """No bar and no control character in a log."""
    assert "%|" not in text
    assert not CONTROL.search(text), repr(CONTROL.search(text))


# -- crawls ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("progress") / "sina.warc.gz"
    build_warc([SINA], path, start_page_url=START)
    return path


def crawl_args(archive: Path, *settings: str) -> list[str]:
    args = ["crawl", "sina", "-a", f"start_urls={START}", "-s", f"REPLAY_ARCHIVE={archive}"]
    for s in (*FAST, *settings):
        args += ["-s", s]
    return args


@pytest.fixture(scope="module")
def terminal_crawl(
    archive: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[int, str, str]:
    """A replayed crawl of the saved Sina pages with stderr on a terminal: (status, screen, db)."""
    db = f"sqlite:///{tmp_path_factory.mktemp('crawl') / 'corpus.db'}"
    status, screen, _ = on_terminal(*crawl_args(archive, "LOG_LEVEL=INFO"), db=db)
    return status, screen, db


def test_crawl_shows_a_status_line_on_a_terminal(terminal_crawl: tuple[int, str, str]) -> None:
    status, screen, _ = terminal_crawl
    assert status == 0, screen[-3000:]
    pages = count_cases(SINA)
    # The line left at the close: pages fetched, pages/s and the crawl's figures.
    last = re.findall(
        r"sina: (\d+) pages \[\d\d:\d\d, [\d.?]+ pages/s, (\d+) articles stored, "
        r"(\d+) dropped, (\d+) fetch failures\]",
        screen,
    )
    assert last, screen[-3000:]
    fetched, stored, dropped, failed = map(int, last[-1])
    assert fetched > pages  # the articles, their list page and robots.txt
    assert (stored, dropped, failed) == (pages, 0, 0)
    assert "\r" in screen  # redrawn in place


def test_crawl_log_lines_land_above_the_status_line(terminal_crawl: tuple[int, str, str]) -> None:
    _, screen, _ = terminal_crawl
    records = list(LOG_RECORD.finditer(screen))
    assert any("Closing spider" in screen[m.start() : m.start() + 80] for m in records)
    for m in records:  # every record starts a line of its own, never after a bar's text
        assert m.start() == 0 or screen[m.start() - 1] in "\r\n", screen[m.start() - 120 : m.end()]
    # Scrapy's once-a-minute line is off: the status carries its figures.
    assert "pages/min" not in screen


def test_crawl_in_a_log_has_plain_status_lines(archive: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'corpus.db'}"
    args = crawl_args(archive, "LOG_LEVEL=INFO", "PROGRESS_LOG_INTERVAL=0.01")
    status, log, _ = redirected(*args, db=db, tmp_path=tmp_path)
    assert status == 0, log[-3000:]
    assert_clean_log(log)
    lines = re.findall(
        r"\[newsspider\.progress\] INFO: sina: (\d+) pages fetched \([\d.]+ pages/s\), "
        r"(\d+) articles stored, (\d+) dropped, (\d+) fetch failures$",
        log,
        re.MULTILINE,
    )
    assert lines, log[-3000:]
    assert "pages/min" not in log  # no LogStats line beside them


def test_crawl_in_a_log_stays_quiet_by_default(archive: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'corpus.db'}"
    status, log, _ = redirected(*crawl_args(archive, "LOG_LEVEL=INFO"), db=db, tmp_path=tmp_path)
    assert status == 0, log[-3000:]
    assert_clean_log(log)
    assert "[newsspider.progress]" not in log  # a short crawl: no minute has passed
    assert PROGRESS_LOG_INTERVAL == 60.0


# -- commands ----------------------------------------------------------------------------


def test_evaluate_shows_one_bar_over_pages_methods_and_passes(tmp_path: Path) -> None:
    dirs = [str(PAGES / "netease"), str(SINA)]
    args = ["evaluate", *dirs, "--method", "blockstats,punctuation"]
    total = sum(count_cases(Path(d)) for d in dirs) * 2 * pass_count(warmup=True)
    status, screen, stdout = on_terminal(*args)
    assert status == 0, screen[-3000:]
    assert re.search(rf"evaluate: 100%\|[^|]*\| {total}/{total} \[[^\]]*page/s\]", screen), screen
    assert "blockstats" in stdout and "punctuation" in stdout

    status, log, stdout_redirected = redirected(*args, tmp_path=tmp_path)
    assert status == 0, log
    assert log == ""  # stderr holds nothing at all: no bar
    assert stdout_redirected.splitlines()[:2] == stdout.splitlines()[:2]


def test_makewarc_shows_a_bar_on_a_terminal_only(tmp_path: Path) -> None:
    total = count_cases(SINA)
    args = ["makewarc", str(SINA), "-o", str(tmp_path / "a.warc.gz"), "--start-url", START]
    status, screen, stdout = on_terminal(*args)
    assert status == 0, screen
    assert re.search(rf"makewarc: 100%\|[^|]*\| {total}/{total} \[", screen), screen
    assert f"{total} pages" in stdout

    args[3] = str(tmp_path / "b.warc.gz")
    status, log, _ = redirected(*args, tmp_path=tmp_path)
    assert status == 0, log
    assert_clean_log(log)
    assert "makewarc" not in log


def test_reclean_and_export_show_bars_on_a_terminal_only(
    terminal_crawl: tuple[int, str, str], tmp_path: Path
) -> None:
    _, _, db = terminal_crawl
    n = Corpus(db).count()
    assert n == count_cases(SINA)
    status, screen, stdout = on_terminal("reclean", db=db)
    assert status == 0, screen
    assert re.search(rf"reclean: 100%\|[^|]*\| {n}/{n} \[", screen), screen
    assert "sina" in stdout
    status, log, _ = redirected("reclean", db=db, tmp_path=tmp_path)
    assert status == 0, log
    assert_clean_log(log)

    out = tmp_path / "corpus.jsonl"
    status, screen, _ = on_terminal("corpus", "export", "-o", str(out), db=db)
    assert status == 0, screen
    assert re.search(rf"export: 100%\|[^|]*\| {n}/{n} \[", screen), screen
    assert len(out.read_text("utf-8").splitlines()) == n
    status, log, _ = redirected("corpus", "export", "-o", str(out), db=db, tmp_path=tmp_path)
    assert status == 0, log
    assert_clean_log(log)


def test_export_to_the_terminal_itself_draws_no_bar(terminal_crawl: tuple[int, str, str]) -> None:
    _, _, db = terminal_crawl
    status, screen, _ = on_terminal("corpus", "export", db=db, stdout_too=True)
    assert status == 0, screen
    assert screen.count('"url": ') == count_cases(SINA)
    assert "export:" not in screen and "%|" not in screen


# -- the library's progress callables ----------------------------------------------------


def counter() -> tuple[list[int], Callable[[int], None]]:
    calls: list[int] = []
    return calls, calls.append


def test_evaluate_reports_every_page_of_every_pass() -> None:
    calls, progress = counter()
    report = evaluate(SINA, get_extractor("blockstats"), warmup=True, repeat=2, progress=progress)
    assert set(calls) == {1}
    assert sum(calls) == report.pages * pass_count(warmup=True, repeat=2) == count_cases(SINA) * 3


def test_build_warc_reports_every_case(tmp_path: Path) -> None:
    calls, progress = counter()
    build_warc([SINA, PAGES / "netease"], tmp_path / "x.warc.gz", progress=progress)
    assert sum(calls) == count_cases(SINA) + count_cases(PAGES / "netease")


def test_train_reports_each_page_used() -> None:
    calls, progress = counter()
    trained = train_site(dataset_samples(SINA, None), 2, progress=progress)
    assert sum(calls) == len(trained.pages) == 2


def test_reclean_and_export_report_up_to_their_totals(
    terminal_crawl: tuple[int, str, str], tmp_path: Path
) -> None:
    _, _, db = terminal_crawl
    engine = engine_for(db)
    plan = reclean_plan(engine)
    assert plan == {"sina": count_cases(SINA)}
    calls, progress = counter()
    reports = reclean_sites(engine, plan, batch=2, progress=progress)
    assert calls[:2] == [2, 1]  # per batch
    assert sum(calls) == sum(plan.values()) == reports["sina"].articles

    corpus = Corpus(db)
    calls, progress = counter()
    with open(tmp_path / "x.jsonl", "w", encoding="utf-8") as fh:
        n = corpus.export(fh, progress=progress)
    assert sum(calls) == n == corpus.count() == corpus.count(site="sina")
    assert corpus.count(site="netease") == 0


def test_reclean_sites_completes_a_site_whose_table_counted_nothing(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'empty.db'}"
    engine = engine_for(db)
    Corpus(engine)  # the schema
    calls, progress = counter()
    reports = reclean_sites(engine, {"sina": 5}, progress=progress)
    assert reports["sina"].articles == 0
    assert sum(calls) == 5  # the bar still reaches its total


def test_the_loops_never_draw_a_bar_themselves() -> None:
    """Extraction, storage and the library loops import neither tqdm nor the progress module."""
    package = REPO / "newsspider"
    library = [
        *package.joinpath("extraction").rglob("*.py"),
        *package.joinpath("storage").rglob("*.py"),
        *(package / name for name in ("evaluation.py", "replay.py", "training.py")),
    ]
    assert len(library) > 20
    for path in library:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                assert name.split(".")[0] != "tqdm", path
                assert not name.startswith("newsspider.progress"), path


# -- the bar helper, the log redirection, the extension -----------------------------------


def test_progress_bar_is_off_when_stderr_is_no_terminal() -> None:
    assert not sys.stderr.isatty()  # pytest captures it
    with progress_bar(10, desc="x") as bar:
        bar.update(10)
        assert bar.disable


def test_logs_above_bars_swaps_only_the_stderr_handler_and_restores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    console = logging.StreamHandler(sys.stderr)
    to_file = logging.FileHandler(tmp_path / "x.log")
    monkeypatch.setattr(logging.root, "handlers", [console, to_file])
    with logs_above_bars():
        with logs_above_bars():  # a second crawler of the same process
            assert console.stream is not sys.stderr
        assert console.stream is not sys.stderr  # held until the last one lets go
        assert to_file.stream is not None and to_file.stream.name.endswith("x.log")
    assert console.stream is sys.stderr
    to_file.close()


def test_crawl_figures_sum_fetch_failures_and_stored_articles() -> None:
    crawler = get_crawler()
    stats = crawler.stats
    assert stats is not None
    stats.set_value("response_received_count", 12)
    stats.set_value("newsspider/articles_new", 4)
    stats.set_value("newsspider/articles_updated", 3)
    stats.set_value("item_dropped_count", 2)
    stats.set_value("newsspider/fetch_failed/sina", 1)
    stats.set_value("newsspider/fetch_failed/netease", 2)
    stats.set_value("newsspider/fetch_failed_reason/dns", 3)  # the same failures by reason
    figures = crawl_figures(stats)
    assert (figures.pages, figures.stored, figures.dropped, figures.failed) == (12, 7, 2, 3)
    assert figures.summary() == "7 articles stored, 2 dropped, 3 fetch failures"


def project_crawler(**settings: object) -> Crawler:
    """A crawler with the project's progress settings (``settings.py``), ``settings`` on top."""
    names = ("PROGRESS_BAR", "PROGRESS_LOG_INTERVAL", "LOGSTATS_INTERVAL", "EXTENSIONS")
    project = {name: getattr(project_settings, name) for name in names}
    return get_crawler(settings_dict={**project, **settings})


def test_extension_picks_the_status_line_or_log_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    def extension(terminal: bool, **settings: object) -> CrawlProgress:
        monkeypatch.setattr(progress_module, "stderr_is_terminal", lambda: terminal)
        return CrawlProgress.from_crawler(project_crawler(**settings))

    on_tty = extension(True)
    assert (on_tty.show_bar, on_tty.log_interval) == (True, 0.0)
    in_log = extension(False)
    assert (in_log.show_bar, in_log.log_interval) == (False, PROGRESS_LOG_INTERVAL)
    with_file = extension(True, LOG_FILE="crawl.log", PROGRESS_LOG_INTERVAL=5)
    assert (with_file.show_bar, with_file.log_interval) == (True, 5.0)
    no_bar = extension(True, PROGRESS_BAR=False)
    assert (no_bar.show_bar, no_bar.log_interval) == (False, PROGRESS_LOG_INTERVAL)
    silent = extension(False, PROGRESS_LOG_INTERVAL=0)
    assert (silent.show_bar, silent.log_interval) == (False, 0.0)


def test_status_log_line_gives_the_rate_of_the_last_interval(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(progress_module, "stderr_is_terminal", lambda: False)
    crawler = project_crawler()
    ext = CrawlProgress.from_crawler(crawler)
    assert crawler.stats is not None
    crawler.stats.set_value("response_received_count", 30)
    ext.last_time -= 10.0  # ten seconds ago, with no page then
    with caplog.at_level(logging.INFO, logger="newsspider.progress"):
        ext.log(Spider(name="sina"))
        ext.log(Spider(name="sina"))  # at once, nothing new: 0 pages/s
    first, second = (r.getMessage() for r in caplog.records)
    assert first.startswith("sina: 30 pages fetched (")
    assert first.endswith("pages/s), 0 articles stored, 0 dropped, 0 fetch failures")
    rate = float(re.findall(r"\(([\d.]+) pages/s\)", first)[0])
    assert 1.0 < rate <= 3.0  # 30 pages over ten seconds (and the moments since)
    assert "(0.00 pages/s)" in second
