"""How well ``scrapy addsite`` learns a site: recall and precision of the patterns it
writes, and what the crawl that follows stores, on replayed fictional sites.

The sites are built by ``tests/sitegen.py`` (three outlets: a date in the path reached
through links, a numeric id reached only through a sitemap, a hash id reached only
through a feed) and, when present, ``tests/sitegen_hard.py`` (five more URL forms:
articles on several subdomains, slug + id in dated folders beside videos of the same
form, a query-string id, opaque mixed-case ids beside galleries of the same form,
percent-encoded section words), all from real saved article pages. For each site it runs
the commands as a user does::

    scrapy addsite HOME --key K --write -s REPLAY_ARCHIVE=A -s SITES_FILE=F
    scrapy crawl K -s REPLAY_ARCHIVE=A -s SITES_FILE=F -s DATABASE_URL=sqlite:///...

and prints a markdown table: fetches spent, article URLs the row's patterns match
(recall), other pages they match (false positives), articles stored with a title and a
time, and pages stored that are no article.

    python benchmarks/discovery.py "$DATASETS"
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from w3lib.url import canonicalize_url  # noqa: E402

from newsspider.sites import read_sites_file  # noqa: E402
from tests import sitegen  # noqa: E402

try:
    from tests import sitegen_hard
except ImportError:  # the harder set is optional
    sitegen_hard = None

FAST = ("-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "EXTRACTION_WORKERS=0")


def scrapy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", *args, *FAST],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def measure(archive: Path, site: sitegen.FakeSite, work: Path) -> dict:
    sites_file = work / f"{site.key}.toml"
    db = work / f"{site.key}.db"
    common = ("-s", f"REPLAY_ARCHIVE={archive}", "-s", f"SITES_FILE={sites_file}")
    out = scrapy("addsite", site.home, "--key", site.key, "--write", *common)
    row = {"site": site.key, "reach": site.reach, "articles": len(site.article_urls)}
    if out.returncode != 0:
        row["error"] = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "?"
        return row
    learnt = read_sites_file(sites_file)[site.key]
    fetches = out.stdout.split(" fetches of ")[0].rsplit(": ", 1)[-1]
    others = [*site.list_urls, *site.other_urls]
    row |= {
        "fetches": fetches,
        "patterns": len(learnt.article_patterns),
        "recall": sum(learnt.is_article(u) for u in site.article_urls) / len(site.article_urls),
        "false": sum(learnt.is_article(u) for u in others),
        "others": len(others),
    }
    crawl = scrapy("crawl", site.key, *common, "-s", f"DATABASE_URL=sqlite:///{db}")
    with sqlite3.connect(db) as conn:
        stored = conn.execute(
            "SELECT url, title, published FROM articles WHERE site = ?", (site.key,)
        ).fetchall()
    articles = {canonicalize_url(u) for u in site.article_urls}
    stored = [(canonicalize_url(u), t, p) for u, t, p in stored]
    row |= {
        "crawl_exit": crawl.returncode,
        "stored": sum(1 for u, t, p in stored if t and p and u in articles) / len(articles),
        "not_articles": sum(1 for u, _, _ in stored if u not in articles),
    }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sets = [sitegen.build_site_archives(args.datasets, work / "easy")]
        if sitegen_hard is not None:
            sets.append(sitegen_hard.build_hard_archives(args.datasets, work / "hard"))
        for archive, sites in sets:
            for site in sites:
                rows.append(measure(archive, site, work))
                print(rows[-1], file=sys.stderr)
    print("| site | reached by | articles | fetches | patterns | recall | other pages matched |"
          " stored with title + time | non-articles stored |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['site']} | {r['reach']} | {r['articles']} | addsite failed: {r['error']} "
                  "| | | | | |")
            continue
        print(
            f"| {r['site']} | {r['reach']} | {r['articles']} | {r['fetches']} | {r['patterns']} "
            f"| {r['recall']:.0%} | {r['false']} of {r['others']} | {r['stored']:.0%} "
            f"| {r['not_articles']} |"
        )


if __name__ == "__main__":
    main()
