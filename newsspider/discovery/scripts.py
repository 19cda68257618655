"""Script shells in discovery: where a shell page's article text is, if anywhere.

A URL group whose sampled pages are script shells (:attr:`.classify.PageVerdict.needs_scripts`:
almost no text beside a large script or JSON blob) is looked at twice before it is left out:

1. **Embedded JSON.** When most samples carry a JSON blob (``__NEXT_DATA__``, an
   ``application/json`` script, ``window.__INITIAL_STATE__``) whose longest Chinese text
   sits at one dotted path (:func:`~newsspider.extraction.embedded.article_json_path`),
   and the text there is a body of :data:`~.classify.MIN_BODY_CHARS`\\ + characters, the
   group is an article group and the row gets that ``json_path``: a crawl reads the body
   there, the title and time from the shell's ``<title>``, ``<meta>`` and JSON-LD.
2. **Rendering.** Else, when Chromium can run here
   (:func:`~newsspider.extraction.render.unavailable_reason`), :data:`RENDER_SAMPLES` of
   the samples are rendered with JavaScript on (inline scripts run, the network stays
   closed) and the rendered DOM is judged like any page (:func:`~.classify.judge_page`).
   When they are articles, the group is an article group and the row gets
   ``render = true``: a crawl renders each article page before extracting it.

Otherwise the group stays out, and its reason says why (no JSON text, not rendered, or
rendered and still no article). A promoted sample's verdict in the discovery's table is
replaced by an article verdict (the rendered page's, or the shell's with the JSON body's
length), so the row's examples, title suffixes and time zone learn from them too; the
group's report keeps the shell verdicts, which say the pages need scripts.

Rendering blocks while Chromium works (about a second for two pages and a browser start);
discovery does it once, after its last fetch.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Self
from urllib.parse import urlsplit

from newsspider.discovery.classify import MAJORITY, MIN_BODY_CHARS, PageVerdict, judge_page
from newsspider.discovery.fetch import Fetched
from newsspider.extraction.embedded import article_json_path, text_at_json_path
from newsspider.extraction.encoding import decode_html
from newsspider.extraction.errors import ExtractionError
from newsspider.extraction.render import BrowserUnavailable, render_html, unavailable_reason

__all__ = ["RENDER_SAMPLES", "ScriptShells", "ShellGroup"]

#: Samples of a shell group rendered in Chromium to see what its scripts build.
RENDER_SAMPLES = 2

_SPACE = re.compile(r"\s+")


@dataclass(slots=True)
class ShellGroup:
    """What one group of script shells turned out to be."""

    kind: str  # article | scripts
    reason: str
    samples: int
    json_path: str | None = None
    render: bool = False


@dataclass(slots=True)
class ScriptShells:
    """The shell groups of one discovery: their pages' bodies, and what each group is.

    ``pages`` maps a fetched URL to its body and Content-Type; ``verdicts`` is the
    discovery's table of judged pages (promoted samples are replaced in it); ``tz`` and
    ``same_site`` are what every sample was judged with. ``renderer`` renders one decoded
    page with JavaScript on (default: the process's Chromium); ``unavailable`` says why
    pages cannot be rendered (default: :func:`unavailable_reason`, asked once).
    """

    pages: Mapping[str, tuple[bytes, str | None]]
    verdicts: dict[str, PageVerdict]
    tz: str | None = None
    same_site: Callable[[str], bool] | None = None
    renderer: Callable[[str], str] = render_html
    unavailable: Callable[[], str | None] = unavailable_reason
    groups: list[ShellGroup] = field(default_factory=list)
    _why_not: str | None = None
    _asked: bool = False

    @classmethod
    def of(
        cls,
        log: Iterable[Fetched],
        verdicts: dict[str, PageVerdict],
        *,
        tz: str | None,
        domain: str,
    ) -> Self:
        """The shells of a discovery: its fetches (``Fetcher.log``), its table of verdicts,
        the zone its pages were judged in, and its registered domain (links on the site)."""
        pages = {
            f.url: (
                f.response.body,
                f.response.headers.get("Content-Type", b"").decode("latin-1") or None,
            )
            for f in log
            if f.response is not None
        }

        def same_site(url: str) -> bool:
            host = (urlsplit(url).hostname or "").lower()
            return host == domain or host.endswith("." + domain)

        return cls(pages, verdicts, tz=tz, same_site=same_site)

    def judge(self, samples: list[PageVerdict], reason: str) -> ShellGroup:
        """The kind of a group whose samples are script shells (module docstring)."""
        found = self._from_json(samples) or self._from_rendering(samples, reason)
        self.groups.append(found)
        return found

    # -- embedded JSON -------------------------------------------------------------

    def _from_json(self, samples: list[PageVerdict]) -> ShellGroup | None:
        paths: dict[str, str] = {}
        for v in samples:
            body = self._body(v.url)
            if body is not None and (path := article_json_path(body, MIN_BODY_CHARS)):
                paths[v.url] = path
        if not paths:
            return None
        path, n = Counter(paths.values()).most_common(1)[0]
        if n / len(samples) < MAJORITY:
            return None
        lengths = {
            url: len(_SPACE.sub("", text_at_json_path(self._body(url) or b"", path)))
            for url, p in paths.items()
            if p == path
        }
        bodies = {url: n for url, n in lengths.items() if n >= MIN_BODY_CHARS}
        if len(bodies) / len(samples) < MAJORITY:
            return None
        for v in samples:
            if v.url in bodies:
                self.verdicts[v.url] = dataclasses.replace(
                    v,
                    kind="article",
                    body_chars=bodies[v.url],
                    reason=f"script shell, body in embedded JSON at {path}",
                )
        chars = min(bodies.values())
        return ShellGroup(
            "article",
            f"{len(bodies)} of {len(samples)} samples are script shells holding the article "
            f"in embedded JSON at {path} (bodies of {chars}+ characters): json_path",
            len(samples),
            json_path=path,
        )

    # -- rendering -----------------------------------------------------------------------

    def _from_rendering(self, samples: list[PageVerdict], reason: str) -> ShellGroup:
        shells = f"{reason}; the pages are script shells (their text needs scripts)"
        why_not = self._cannot_render()
        if why_not is not None:
            return ShellGroup(
                "scripts",
                f"{shells}, with no article text in embedded JSON, and not rendered: {why_not}",
                len(samples),
            )
        rendered: list[PageVerdict] = []
        failures: list[str] = []
        for v in [v for v in samples if self._body(v.url) is not None][:RENDER_SAMPLES]:
            try:
                rendered.append(self._render(v))
            except BrowserUnavailable as exc:
                self._why_not = f"Chromium did not start ({exc})"
                return ShellGroup(
                    "scripts",
                    f"{shells}, with no article text in embedded JSON, and not rendered: "
                    f"{self._why_not}",
                    len(samples),
                )
            except ExtractionError as exc:  # a timeout, a crash, bytes that are no page
                failures.append(f"{v.url}: {exc}")
        articles = [r for r in rendered if r.kind == "article"]
        if rendered and len(articles) == len(rendered) and not failures:
            for r in articles:
                shell = self.verdicts.get(r.url)
                self.verdicts[r.url] = dataclasses.replace(
                    r,
                    html_title=shell.html_title if shell else r.html_title,
                    declared_charset=shell.declared_charset if shell else r.declared_charset,
                    reason="script shell, an article once rendered with JavaScript",
                )
            chars = min(r.body_chars for r in articles)
            return ShellGroup(
                "article",
                f"{len(samples)} samples are script shells; {len(articles)} rendered with "
                f"JavaScript are articles (title, time, bodies of {chars}+ characters): render",
                len(samples),
                render=True,
            )
        said = [f"{r.url}: {r.kind}, {r.reason}" for r in rendered if r.kind != "article"]
        return ShellGroup(
            "scripts",
            f"{shells}; rendered with JavaScript, still no article ({'; '.join(said + failures)})",
            len(samples),
        )

    def _cannot_render(self) -> str | None:
        if not self._asked:
            self._asked = True
            self._why_not = self.unavailable()
        return self._why_not

    def _render(self, shell: PageVerdict) -> PageVerdict:
        body, content_type = self.pages[shell.url]
        text, _ = decode_html(body, content_type)
        dom = self.renderer(text)
        return judge_page(
            dom.encode("utf-8"),
            shell.url,
            headers={"Content-Type": "text/html; charset=utf-8"},
            tz=self.tz,
            same_site=self.same_site,
        )

    def _body(self, url: str) -> bytes | None:
        page = self.pages.get(url)
        return page[0] if page is not None else None

    # -- the row ---------------------------------------------------------------------------

    def row_fields(self, notes: list[str]) -> tuple[bool, str | None]:
        """``render`` and ``json_path`` for the row, with a note per kind of shell group."""
        if not self.groups:
            return False, None
        json_groups = [g for g in self.groups if g.json_path]
        render_groups = [g for g in self.groups if g.render]
        left_out = [g for g in self.groups if g.kind != "article"]
        json_path = None
        if json_groups:
            paths = Counter(g.json_path for g in json_groups)
            json_path = paths.most_common(1)[0][0]
            notes.append(
                f"{sum(g.samples for g in json_groups)} sampled pages are script shells with "
                f"the article in embedded JSON at {json_path}: json_path reads it"
            )
        render = bool(render_groups)
        if render:
            notes.append(
                f"{sum(g.samples for g in render_groups)} sampled pages are script shells "
                "whose scripts build the article: render = true (a crawl renders each article "
                "page in Chromium before extracting it)"
            )
        if left_out:
            notes.append(
                f"{sum(g.samples for g in left_out)} sampled pages are script shells whose "
                f"links were left out: {left_out[0].reason.split('; ', 1)[-1]}"
            )
        return render, json_path
