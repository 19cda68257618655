"""Reach on the acceptance portal (tests/portalsite.py): the figures of docs/crawling.md.

Runs what a new user runs on a portal in no site file, through the commands, offline:
``scrapy addsite URL --write``, ``scrapy crawl KEY`` (night one), the site publishes night
two, ``scrapy sites check KEY --json``, ``scrapy nightly --sites KEY`` (with its gap fill)
and the check again (``tests.portalsite.Nights``, the acceptance test's commands),
and prints, against the portal's truth:

- stories stored after each night, of those published;
- multi-page articles stored as one row with their pages in order, and their body F1
  against the joined gold (``newsspider.evaluation.score_body``), rows of page 2..n;
- rows that should never be (topic, list, challenge pages);
- kinds right, of the pages under the article URL form (a topic is right when not stored);
- the reach addsite reported, the coverage the check named before the nightly run and the
  ``coverage_days`` rows after it.

    python benchmarks/reach_portal.py "$DATASETS" [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsspider.evaluation import score_body  # noqa: E402
from newsspider.storage import Article, engine_for  # noqa: E402
from newsspider.storage.models import CoverageDay  # noqa: E402
from tests.portalsite import KEY, Nights, serve_portal  # noqa: E402


def stored(database_url: str) -> dict[str, Article]:
    with Session(engine_for(database_url)) as s:
        rows = {a.url: a for a in s.scalars(select(Article).where(Article.site == KEY))}
        s.expunge_all()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path)
    parser.add_argument("--keep", type=Path, help="keep the corpus and sites file here")
    opts = parser.parse_args()
    tmp = opts.keep or Path(tempfile.mkdtemp(prefix="reach-"))
    tmp.mkdir(parents=True, exist_ok=True)
    with serve_portal(opts.datasets) as server:
        portal, nights = server.portal, Nights(server, tmp)
        database_url = nights.database_url
        nights.night_one()
        add, crawl = nights.addsite, nights.crawl
        reach = re.search(r"^.*reach.*$", add.stdout, re.M | re.I)
        print(f"addsite: exit {add.returncode}; {reach.group(0).strip() if reach else '-'}")
        if crawl is None:
            sys.exit(f"addsite failed: {add.stderr.strip().splitlines()[-1:]}")
        summary = re.findall(r"\[newsspider\.extensions\] \w+: (.*)$", crawl.stderr, re.M)
        print(f"crawl: exit {crawl.returncode}; {summary[-1] if summary else '-'}")
        one = stored(database_url)
        night_one = portal.stored_urls(released=False)
        n1 = sum(u in one for u in night_one)
        print(f"night one: {n1} of {len(night_one)} stories stored ({n1 / len(night_one):.1%})")
        nights.night_two()
        check = nights.check_before
        cov = json.loads(check.stdout)[0]["coverage"] if check.stdout.strip() else None
        if cov:
            print(
                f"sites check before nightly: exit {check.returncode}; coverage listed "
                f"{cov['listed']}, stored {cov['stored']}, missing {cov['missing']}"
            )
        print(f"nightly: exit {nights.nightly.returncode}")
        rows = stored(database_url)
    every = portal.stored_urls()
    n = sum(u in rows for u in every)
    print(f"after night two: {n} of {len(every)} stories stored ({n / len(every):.1%})")
    scores, whole = [], 0
    for first, pages in portal.multipage.items():
        row = rows.get(first)
        if row is None:
            continue
        whole += json.loads(row.page_urls or "[]") == list(pages)
        scores.append(score_body(row.raw_text or "", portal.stories[first].text).f1)
    later = {p for pages in portal.multipage.values() for p in pages[1:]}
    print(
        f"multi-page: {len(scores)} of {len(portal.multipage)} stored, {whole} with every page "
        f"in order; body F1 min {min(scores):.3f} mean {sum(scores) / len(scores):.3f}; "
        f"rows of page 2..n: {len(later & set(rows))}"
    )
    never = portal.never_stored() & set(rows)
    print(f"rows that should not exist (topic, list, challenge): {len(never)}")
    right = total = 0
    for url, kind in portal.kinds.items():
        total += 1
        if kind == "topic":
            right += url not in rows
        elif url in rows:
            right += (rows[url].kind or "article") == kind
    print(f"kinds right: {right} of {total} ({right / total:.1%})")
    with Session(engine_for(database_url)) as s:
        days = list(s.scalars(select(CoverageDay).where(CoverageDay.site == KEY)))
        for d in sorted(days, key=lambda d: d.day):
            share = (d.stored + d.filled) / d.listed if d.listed else None
            print(
                f"coverage {d.day}: listed {d.listed}, stored {d.stored}, missing {d.missing}, "
                f"filled {d.filled}" + (f" ({share:.0%})" if share is not None else "")
            )


if __name__ == "__main__":
    main()
