"""The registry of extraction methods: one name per method and mode, every method one
:class:`Extractor`, imported only when used."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from newsspider.extraction import MODES, Extractor, extract_article
from newsspider.extraction.article import Blockstats
from newsspider.extraction.punctuation import extract_punctuation
from newsspider.extraction.registry import NAMES, REGISTRY, extract_with, get_extractor
from newsspider.extraction.visual import extract_visual, extract_visual_blockstats
from newsspider.extraction.xpathseg import extract_xpath
from newsspider.settings import EXTRACTOR

REPO = Path(__file__).resolve().parents[1]
PAGE = (
    "<html><head><title>标题</title></head><body><h1>标题</h1><div>"
    + "".join(f"<p>这是第{k}段正文，内容足够长，让每个方法都认出正文区域。</p>" for k in range(8))
    + "</div></body></html>"
)


def test_the_names_scrapy_evaluate_labels_its_runs_with() -> None:
    assert NAMES == (
        "blockstats",
        "blockstats-paper",
        "punctuation",
        "xpath",
        "visual",
        "visual+blockstats",
        "visual+blockstats-best",
    )
    assert EXTRACTOR in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_name_is_an_extractor_of_its_mode(name: str) -> None:
    extractor = get_extractor(name)
    assert isinstance(extractor, Extractor)
    assert (extractor.name, extractor.mode) == (name, REGISTRY[name].mode)
    assert extractor.mode in MODES
    assert get_extractor(name) is extractor  # built once a process


def test_library_functions_are_the_registered_methods() -> None:
    for function in (extract_punctuation, extract_xpath, extract_visual, extract_visual_blockstats):
        registered = get_extractor(function.name)
        assert (type(function), function.mode) == (type(registered), registered.mode)


@pytest.mark.parametrize("name", ["blockstats", "blockstats-paper", "punctuation", "xpath"])
def test_extract_with_runs_the_named_method(name: str) -> None:
    art = extract_with(name, PAGE.encode("utf-8"), "http://example.com/a", tz="Asia/Shanghai")
    assert art.mode == REGISTRY[name].mode and art.url == "http://example.com/a"
    assert "这是第3段正文" in art.text


def test_blockstats_names_are_extract_articles_modes() -> None:
    assert extract_with("blockstats", PAGE) == extract_article(PAGE, mode="best")
    assert extract_with("blockstats-paper", PAGE) == extract_article(PAGE, mode="paper")


def test_a_bad_name_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown extraction method 'blockstats-fast'") as e:
        get_extractor("blockstats-fast")
    assert all(name in str(e.value) for name in NAMES)


def test_a_bad_mode_is_refused_once_for_every_method() -> None:
    with pytest.raises(ValueError, match="unknown mode 'fast'; expected one of paper, best"):
        Blockstats("blockstats-fast", "fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown mode"):
        extract_article(PAGE, mode="fast")


def test_a_method_takes_only_its_own_parameters() -> None:
    with pytest.raises(TypeError, match="mode"):
        extract_punctuation(PAGE, mode="best")
    assert extract_punctuation(PAGE, p=0.0).text == ""  # p is punctuation's own


def test_listing_names_and_running_cpu_methods_never_import_playwright() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["playwright"] = None  # importing it now raises ImportError
        from newsspider.extraction.registry import NAMES, extract_with
        assert "visual" in NAMES
        assert extract_with("blockstats", "<p>正文，内容。</p>").mode == "best"
        assert extract_with("xpath", "<p>正文，内容。</p>").mode == "paper"
        loaded = [m for m in sys.modules if m.startswith(("newsspider.extraction.visual",
                                                          "newsspider.extraction.render"))]
        assert not loaded, loaded
        """
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)
