"""The demo's replay archive: every saved page of a paper site behind one start page."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from newsspider.replay import build_warc
from newsspider.sites import SITES, Site

#: The saved pages shipped with the package, one folder per site.
PAGES: Path = Path(__file__).resolve().parent / "pages"

#: site -> the start page written into the archive, on one of the site's own hosts so the
#: crawl's offsite rule lets it through; it links every saved page of that site.
START_PAGES: dict[str, str] = {
    "netease": "http://money.163.com/demo/start.html",
    "sina": "https://news.sina.com.cn/demo/start.html",
    "tencent": "https://news.qq.com/demo/start.html",
    "zaobao": "https://www.zaobao.com.sg/demo/start.html",
}


@dataclass(slots=True)
class DemoArchive:
    """What :func:`build_demo_archive` wrote: the WARC, each site's start page and the
    URLs of its saved pages."""

    path: Path
    start_urls: dict[str, str] = field(default_factory=dict)
    urls: dict[str, tuple[str, ...]] = field(default_factory=dict)


def page_folders(root: Path) -> list[Path]:
    """``root`` and every folder below it that holds a ``cases.jsonl``, sorted."""
    return sorted(p.parent for p in Path(root).rglob("cases.jsonl"))


def host_pattern(site: Site) -> str:
    """A regex for URLs on the site's ``allowed_domains`` or below them."""
    domains = "|".join(re.escape(d) for d in site.allowed_domains)
    return rf"^https?://(?:[^/?#]*\.)?(?:{domains})(?:[:/?#]|$)"


def build_demo_archive(
    out: Path, sources: Iterable[Path] = (PAGES,), sites: Iterable[str] = tuple(START_PAGES)
) -> DemoArchive:
    """Write the pages of ``sources`` (folders searched with :func:`page_folders`) to ``out``.

    Each site in ``sites`` gets the pages whose URL is on its hosts, listed on its start
    page from :data:`START_PAGES`; a site with no page is left out. ``out`` is one
    ``.warc.gz``: a series of gzip members, so the per-site parts are concatenated.
    """
    out = Path(out)
    folders = [folder for source in sources for folder in page_folders(source)]
    archive = DemoArchive(out)
    parts: list[Path] = []
    for key in sites:
        part = out.with_name(f"{key}.{out.name}")
        built = build_warc(
            folders,
            part,
            start_page_url=START_PAGES[key],
            per_page=1000,
            match=host_pattern(SITES[key]),
        )
        if built.count:
            parts.append(part)
            archive.start_urls[key] = built.start_url
            archive.urls[key] = built.urls
        else:
            part.unlink()
    with open(out, "wb") as fh:
        for part in parts:
            with open(part, "rb") as f:
                shutil.copyfileobj(f, fh)
            part.unlink()
    return archive
