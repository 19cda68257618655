"""``scrapy train`` and the ``xpath_thresholds`` table (Hou & Yang 2011 §3.3).

The sample pages are the hand-computed page of ``test_xpathseg`` (per-page thresholds:
Length 24, B_n 105/136) and SMALL below, so every stored value is known in advance.
"""

from __future__ import annotations

import gzip
import json
import zlib
from datetime import timedelta
from pathlib import Path

import pytest
from scrapy.cmdline import execute
from scrapy.utils.project import get_project_settings
from sqlalchemy import func, inspect, select
from sqlalchemy.orm import Session

from newsspider.extraction.xpathseg import Thresholds, extract_xpath, page_thresholds
from newsspider.replay import build_warc
from newsspider.storage import create_schema, engine_for, upsert_articles
from newsspider.storage.models import XpathThresholds
from newsspider.storage.thresholds import (
    all_thresholds,
    load_all_thresholds,
    load_thresholds,
    save_thresholds,
    thresholds_params,
)
from newsspider.training import _decoded_body
from tests.test_xpathseg import BODY, PAGE

REPO = Path(__file__).resolve().parents[1]

# Leaves: 0 一, 1 二 (/html/body/ul/li/a, links), 2 标题文字 (/html/body/h1),
# 3 正文一。, 4 正文二。 (/html/body/div/p).
# Length per cluster: 4, 8, 16 (three distinct values: each its own centroid) -> Mid 8.
# B_n per cluster: 0 (no non-link text), 1 (4/4 * 1/1), 2 (8/8 * 2/1) -> Mid 1.
SMALL = """<html><body>
<ul><li><a href="/1">一</a></li><li><a href="/2">二</a></li></ul>
<h1>标题文字</h1>
<div><p>正文一。</p><p>正文二。</p></div>
</body></html>"""
PAGE_T = Thresholds(24.0, 105 / 136)
SMALL_T = Thresholds(8.0, 1.0)

URL_A = "http://money.163.com/15/0702/05/AAAAAAAA00253B0H.html"
URL_B = "http://money.163.com/15/0703/06/BBBBBBBB00253B0H.html"


def test_hand_values_of_the_samples():
    found = page_thresholds(PAGE)
    assert found is not None
    assert (found.Length_Threshold, found.B_n_Threshold) == pytest.approx(
        (PAGE_T.Length_Threshold, PAGE_T.B_n_Threshold)
    )
    assert page_thresholds(SMALL) == SMALL_T


@pytest.fixture
def dataset(tmp_path) -> Path:
    """A dataset folder: two NetEase pages, one Sina page, one page of no known site."""
    d = tmp_path / "mini-zh"
    (d / "html").mkdir(parents=True)
    cases = [
        ("a", "163.com", URL_A, PAGE.encode("gbk")),
        ("b", "163.com", URL_B, SMALL.encode("utf-8")),
        ("c", "sina.com.cn", "https://news.sina.com.cn/c/2024-01-01/doc-x.shtml", b"<p>x</p>"),
        ("d", None, None, b"<html><body> </body></html>"),
    ]
    with open(d / "cases.jsonl", "w", encoding="utf-8") as f:
        for case_id, site, url, body in cases:
            (d / "html" / f"{case_id}.html").write_bytes(body)
            row = {"id": case_id, "site": site, "url": url, "html_file": f"html/{case_id}.html"}
            f.write(json.dumps({**row, "title": None, "published": None, "body": None}) + "\n")
    return d


@pytest.fixture
def db_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'train.db'}"


def scrapy(monkeypatch, capsys, db_url: str, *argv: str) -> tuple[int, str, str]:
    """Run ``scrapy ...`` in this process (as scrapy.cmdline does): (exit status, out, err)."""
    monkeypatch.chdir(REPO)
    with pytest.raises(SystemExit) as exc:
        execute(["scrapy", *argv, "-s", f"DATABASE_URL={db_url}"], get_project_settings())
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def stored(db_url: str) -> dict[str, Thresholds]:
    engine = engine_for(db_url)
    create_schema(engine)
    with Session(engine) as session:
        return all_thresholds(session)


# -- the table -----------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path):
    """A fresh ``xpath_thresholds`` on each backend (PostgreSQL: skipped without its binaries)."""
    if request.param == "sqlite":
        eng = engine_for(f"sqlite:///{tmp_path / 'th.db'}")
    else:
        eng = engine_for(request.getfixturevalue("postgresql_url"))
        XpathThresholds.__table__.drop(eng, checkfirst=True)
    create_schema(eng)
    return eng


def test_save_load_replace(engine):
    create_schema(engine)  # idempotent
    with Session(engine) as s, s.begin():
        assert load_thresholds(s, "netease") is None
        assert thresholds_params(s, "netease") == {}
        save_thresholds(s, "netease", Thresholds(10.0, 0.5, 3))
        save_thresholds(s, "sina", Thresholds(20.0, 1.5, 4))
    with Session(engine) as s, s.begin():
        save_thresholds(s, "netease", Thresholds(12.5, 0.75, 5))  # replaces, never duplicates
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(XpathThresholds)) == 2
        assert load_thresholds(s, "netease") == Thresholds(12.5, 0.75, 5)
        assert thresholds_params(s, "netease") == {"Length_Threshold": 12.5, "B_n_Threshold": 0.75}
        assert list(all_thresholds(s)) == ["netease", "sina"]
        row = s.get(XpathThresholds, "netease")
        assert row.trained_at.utcoffset() == timedelta(0)  # aware UTC (UTCDateTime)
    # The paper's names in Python, lower case in the database (no quoted identifiers).
    columns = {c["name"] for c in inspect(engine).get_columns("xpath_thresholds")}
    assert columns == {"site", "length_threshold", "b_n_threshold", "pages", "trained_at"}



def test_load_all_thresholds_reads_without_creating(tmp_path, caplog):
    """What a crawl reads once: the stored rows; ``{}`` without the table (and the table is
    not created by reading); ``{}`` with a warning when the database cannot be read."""
    url = f"sqlite:///{tmp_path / 'read.db'}"
    assert load_all_thresholds(url) == {}
    assert "xpath_thresholds" not in inspect(engine_for(url)).get_table_names()
    engine = engine_for(url)
    create_schema(engine)
    with Session(engine) as s, s.begin():
        save_thresholds(s, "sina", Thresholds(20.0, 1.5, 4))
    assert load_all_thresholds(url) == {"sina": Thresholds(20.0, 1.5, 4)}
    (tmp_path / "not-a-db").write_bytes(b"this is not a SQLite file" * 100)
    with caplog.at_level("WARNING"):
        assert load_all_thresholds(f"sqlite:///{tmp_path / 'not-a-db'}") == {}
    assert "xpath thresholds not read" in caplog.text

def test_stored_thresholds_drive_extraction(tmp_path):
    engine = engine_for(f"sqlite:///{tmp_path / 'th2.db'}")
    create_schema(engine)
    with Session(engine) as s, s.begin():
        save_thresholds(s, "netease", Thresholds(20.0, 1.0, 2))
        save_thresholds(s, "strict", Thresholds(20.0, 3.0, 2))
    with Session(engine) as s:
        assert extract_xpath(PAGE, **thresholds_params(s, "netease")).text.splitlines() == BODY
        assert extract_xpath(PAGE, **thresholds_params(s, "strict")).text == ""  # B_n 2.36 <= 3
        assert extract_xpath(PAGE, **thresholds_params(s, "untrained")).text.splitlines() == BODY


# -- the command ---------------------------------------------------------------------------


def test_train_from_a_dataset_folder(monkeypatch, capsys, dataset, db_url):
    """The site's pages a and b (163.com): min(24, 8) = 8, min(105/136, 1) = 105/136."""
    code, out, _ = scrapy(
        monkeypatch, capsys, db_url, "train", "netease", "--dataset", str(dataset)
    )
    assert code == 0, out
    assert stored(db_url) == {"netease": Thresholds(8.0, pytest.approx(105 / 136), 2)}
    assert "mini-zh/a" in out and "mini-zh/b" in out and "mini-zh/c" not in out
    assert "minimum over M = 2 pages" in out and "stored" in out
    # Retraining on the first page only replaces the row.
    code, out, _ = scrapy(
        monkeypatch, capsys, db_url, "train", "netease", "--dataset", str(dataset), "--pages", "1"
    )
    assert code == 0
    assert stored(db_url) == {"netease": Thresholds(24.0, pytest.approx(105 / 136), 1)}


def test_train_all_pages_json_dry_run(monkeypatch, capsys, dataset, db_url):
    code, out, _ = scrapy(
        monkeypatch, capsys, db_url,
        "train", "mini", "--dataset", str(dataset), "--all-pages", "--dry-run", "--json",
    )  # fmt: skip
    assert code == 0
    report = json.loads(out)
    # c is one leaf "x" (Length 1, B_n 1/1 * 1/1 = 1); d has no text and is skipped.
    assert [s["page"] for s in report["samples"]] == ["mini-zh/a", "mini-zh/b", "mini-zh/c"]
    assert report["skipped"] == [{"page": "mini-zh/d", "reason": "no text"}]
    assert (report["Length_Threshold"], report["B_n_Threshold"]) == (1.0, pytest.approx(105 / 136))
    assert report["pages"] == 3 and report["stored"] is False
    assert stored(db_url) == {}


def test_train_from_stored_articles_in_a_warc(monkeypatch, capsys, tmp_path, dataset, db_url):
    """Stored articles have no HTML in the database: it is read from the crawl's WARC."""
    archive = tmp_path / "crawl.warc.gz"
    build_warc([dataset], archive)
    engine = engine_for(db_url)
    create_schema(engine)
    rows = [
        {"url": u, "site": "netease", "source": "网易", "content": "x", "raw_text": "x"}
        for u in (URL_A, URL_B, "http://money.163.com/15/0704/07/NOTINWARC.html")
    ]
    with Session(engine) as s, s.begin():
        upsert_articles(s, rows)
    code, out, _ = scrapy(
        monkeypatch, capsys, db_url, "train", "netease", "--warc", str(archive), "--pages", "5"
    )
    assert code == 0, out
    assert stored(db_url) == {"netease": Thresholds(8.0, pytest.approx(105 / 136), 2)}
    assert URL_A in out and URL_B in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "netease"], "give --dataset DIR or --warc FILE"),
        (["train", "nosuchsite", "--dataset", "{dataset}"], "unknown site"),
        (["train", "netease", "--dataset", "{dataset}", "--pages", "0"], "at least 1"),
        (["train", "netease", "--dataset", "/nonexistent"], "not a dataset folder"),
        (["train", "zaobao", "--warc", "{dataset}/cases.jsonl"], "no stored articles"),
        (["train", "netease", "--warc", "/nonexistent.warc.gz"], "no such archive"),
    ],
)
def test_usage_errors(monkeypatch, capsys, dataset, db_url, argv, message):
    argv = [a.replace("{dataset}", str(dataset)) for a in argv]
    code, out, err = scrapy(monkeypatch, capsys, db_url, *argv)
    assert code == 2
    assert message in out + err


def test_no_usable_page(monkeypatch, capsys, tmp_path, db_url):
    d = tmp_path / "empty-zh"
    (d / "html").mkdir(parents=True)
    (d / "html" / "x.html").write_bytes(b"<html><body></body></html>")
    (d / "cases.jsonl").write_text(json.dumps({"id": "x", "html_file": "html/x.html"}) + "\n")
    code, out, _ = scrapy(
        monkeypatch, capsys, db_url, "train", "netease", "--dataset", str(d), "--all-pages"
    )
    assert code == 1 and "nothing stored" in out


def test_warc_bodies_are_decompressed():
    body = b"<html><body><p>\xe6\xad\xa3\xe6\x96\x87</p></body></html>"
    assert _decoded_body(body, []) == body
    assert _decoded_body(gzip.compress(body), [("Content-Encoding", "gzip")]) == body
    assert _decoded_body(zlib.compress(body), [("content-encoding", "deflate")]) == body
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert (
        _decoded_body(raw.compress(body) + raw.flush(), [("Content-Encoding", "deflate")]) == body
    )
    assert _decoded_body(b"\x00", [("Content-Encoding", "br")]) is None
