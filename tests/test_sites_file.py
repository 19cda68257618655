"""Sites as data: the shipped TOML table, a user's file over it, and every kind of mistake in
a sites file reported as one line naming the file, the site and the field (exit status 2).

Commands run as subprocesses (``scrapy list``, ``scrapy crawl``), as a user runs them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from newsspider.sites import (
    BUILTIN,
    BUILTIN_FILE,
    SITES,
    SitesFileError,
    load_table,
    read_sites_file,
)
from newsspider.sites.write import add_site

REPO = Path(__file__).resolve().parents[1]

GOOD = """\
[huanan]
source = '华南日报'
allowed_domains = ['huanan-daily.cn']
start_urls = ['https://www.huanan-daily.cn/']
article_patterns = ['^https?://www\\.huanan-daily\\.cn/news/(\\d{4}-\\d{2}-\\d{2})/(\\d+)\\.html']
list_patterns = ['^https?://www\\.huanan-daily\\.cn/(?:[a-z]+/)?$']
tz = 'Asia/Shanghai'
"""


def scrapy(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_shipped_file_loads_and_every_pattern_compiles() -> None:
    table = read_sites_file(BUILTIN_FILE, BUILTIN)
    assert list(table)[:8] == [
        "netease", "sina", "tencent", "zaobao", "sohu", "xinhua", "chinadaily", "thepaper",
    ]
    assert len(table) >= 38
    for site in table.values():
        for pattern in site.article_patterns + site.list_patterns:
            assert re.compile(pattern).pattern.startswith("^https?://")
        for url in site.start_urls:
            assert not site.is_article(url), (site.key, url)
        for url in site.examples:
            assert site.is_article(url), (site.key, url)
        assert site.facts, f"{site.key}: no statement of where its facts come from"


def test_catalogue_rows_are_unchecked_and_not_nightly() -> None:
    table = read_sites_file(BUILTIN_FILE, BUILTIN)
    eight = {"netease", "sina", "tencent", "zaobao", "sohu", "xinhua", "chinadaily", "thepaper"}
    for key, site in table.items():
        if key in eight:
            assert site.checked and site.enabled
        else:
            assert not site.checked and not site.enabled, key
            assert site.examples, f"{key}: the row names no article URL it was written from"


def test_user_file_adds_and_overrides(tmp_path: Path) -> None:
    user = tmp_path / "sites.toml"
    user.write_text(
        GOOD + "\n[zaobao]\nsource = '早报'\nallowed_domains = ['zaobao.com']\n"
        "start_urls = ['https://www.zaobao.com/']\n"
        "article_patterns = ['^https?://www\\.zaobao\\.com/x/(\\d+)']\ntz = 'Asia/Singapore'\n",
        encoding="utf-8",
    )
    table = load_table(user)
    assert table["huanan"].origin == str(user) and table["huanan"].enabled
    assert table["zaobao"].source == "早报" and table["zaobao"].origin == str(user)
    assert list(table).index("zaobao") == 3  # an override keeps the built-in row's place
    assert table["netease"].origin == BUILTIN


def test_scrapy_list_shows_the_users_sites(tmp_path: Path) -> None:
    user = tmp_path / "mine.toml"
    user.write_text(GOOD, encoding="utf-8")
    out = scrapy("list", "-s", f"SITES_FILE={user}")
    assert out.returncode == 0, out.stderr
    names = out.stdout.split()
    assert "huanan" in names and "netease" in names and len(names) >= 39


#: One mistake each: (file text, what the one line must name).
MISTAKES = {
    "unknown field": (GOOD + "colour = 'red'\n", "site 'huanan', field colour: unknown field"),
    "bad regex": (
        GOOD.replace("(\\d+)\\.html", "(\\d+\\.html"),
        "site 'huanan', field article_patterns:",
    ),
    "unanchored": (
        GOOD.replace("['^https?://www\\.huanan-daily\\.cn/(?:", "['www\\.huanan-daily\\.cn/(?:"),
        "site 'huanan', field list_patterns:",
    ),
    "time zone": (GOOD.replace("Asia/Shanghai", "Asia/Beijing"), "field tz: unknown time zone"),
    "duplicate key": (GOOD + "\n" + GOOD, "site 'huanan', field (key): declared twice"),
    "encoding": (GOOD + "encoding = 'gb-9999'\n", "field encoding: 'gb-9999' is not an encoding"),
    "pattern matches a start page": (
        GOOD.replace("start_urls = ['https://www.huanan-daily.cn/']",
                     "start_urls = ['https://www.huanan-daily.cn/news/2024-01-01/1.html']"),
        "field article_patterns: a pattern matches the site's own start page",
    ),
    "wrong type": (GOOD + "render = 'yes'\n", "field render: 'yes' is not true or false"),
    "bad key": (GOOD.replace("[huanan]", "[Hua-Nan]"), "a key is a lowercase identifier"),
    "not toml": (GOOD + "oops\n", "not valid TOML"),
    "example not matched": (
        GOOD + "examples = ['https://www.huanan-daily.cn/video/1.html']\n",
        "field examples: no article pattern matches",
    ),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_mistake_is_one_line(tmp_path: Path, mistake: str) -> None:
    text, expected = MISTAKES[mistake]
    user = tmp_path / "sites.toml"
    user.write_text(text, encoding="utf-8")
    with pytest.raises(SitesFileError, match=re.escape(expected)):
        load_table(user)
    if mistake in ("unknown field", "duplicate key", "pattern matches a start page"):
        # through the commands, as a user meets it: one line, exit status 2
        for args in (["list"], ["crawl", "huanan"], ["fetch", "https://127.0.0.1:9/"]):
            out = scrapy(*args, "-s", f"SITES_FILE={user}")
            assert out.returncode == 2, (args, out.stderr)
            lines = out.stderr.strip().splitlines()
            assert len(lines) == 1, (args, out.stderr)
            assert str(user) in lines[0] and expected in lines[0]


def test_add_site_keeps_the_users_file_and_refuses_a_taken_key(tmp_path: Path) -> None:
    user = tmp_path / "sites.toml"
    user.write_text("# my own sites, with a comment to keep\n" + GOOD, encoding="utf-8")
    site = SITES["sina"]
    add_site(user, site)
    text = user.read_text(encoding="utf-8")
    assert text.startswith("# my own sites, with a comment to keep\n")
    table = read_sites_file(user)
    assert list(table) == ["huanan", "sina"]
    assert table["sina"].article_patterns == site.article_patterns
    assert table["sina"].feeds == site.feeds
    before = user.read_bytes()
    with pytest.raises(SitesFileError, match="already there"):
        add_site(user, site)
    assert user.read_bytes() == before


def test_add_site_creates_the_file(tmp_path: Path) -> None:
    user = tmp_path / "new" / "sites.toml"
    add_site(user, SITES["zaobao"])
    assert read_sites_file(user)["zaobao"].tz == "Asia/Singapore"


def test_nightly_crawls_enabled_rows_not_the_unchecked_catalogue(tmp_path: Path) -> None:
    from scrapy.settings import Settings

    from newsspider.sites import configure_sites, nightly_sites

    user = tmp_path / "sites.toml"
    user.write_text(GOOD, encoding="utf-8")
    settings = Settings({"SITES_FILE": str(user)})
    try:
        configure_sites(settings)
        keys = nightly_sites(settings)
        assert keys == [
            "netease", "sina", "tencent", "zaobao", "sohu", "xinhua", "chinadaily", "thepaper",
            "huanan",
        ]
        chosen = Settings({"SITES_FILE": str(user), "NIGHTLY_SITES": "people,huanan"})
        assert nightly_sites(chosen) == ["people", "huanan"]
    finally:
        configure_sites(Settings({"SITES_FILE": str(tmp_path / "none.toml")}))
    assert "huanan" not in SITES
