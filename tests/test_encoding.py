"""Decoding pages to Unicode (Li & Jiang 2012 §1)."""

from __future__ import annotations

import codecs
import json
import logging
import re
from pathlib import Path

import pytest

from newsspider.extraction import encoding
from newsspider.extraction.encoding import decode_html
from newsspider.extraction.errors import ExtractionError

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
DATASETS = SHARED / "datasets"
GB_ENCODINGS = {"gb2312", "gbk", "gb18030"}

NEWS = (
    "新华社北京电 国务院总理今天主持召开国务院常务会议，"
    "部署进一步推动经济稳定增长的措施，要求各地区各部门加大工作力度，"
    "确保全年目标任务顺利完成。会议指出，当前经济运行总体平稳，"
    "但也面临不少困难和挑战，必须保持定力，深化改革，扩大开放，稳定就业和物价。"
)
# "镕" and "喆" are in GBK but not in GB2312.
GBK_ONLY = "朱镕基总理会见了张喆等青年代表。"
TRADITIONAL = (
    "臺北市政府今天上午召開記者會，宣布明年起將擴大推動公共運輸優惠方案，"
    "凡是持有市民卡的通勤族，每月只要繳交固定費用，就能無限次搭乘捷運、公車及公共自行車。"
    "市長在會中表示，過去幾年來臺北的交通壅塞問題日益嚴重，尖峰時段主要幹道車速偏低，"
    "不僅浪費民眾寶貴的時間，也造成空氣污染與能源消耗。為了鼓勵更多市民改用大眾運輸，"
    "市府經過多次評估與協調，決定投入新臺幣數十億元的預算，並與新北市、基隆市及桃園市共同合作，"
    "讓跨縣市通勤的上班族也能享有同樣的優惠。交通局長補充說明，這項計畫將分階段實施，"
    "第一階段預計在明年一月上路，屆時民眾可以透過手機應用程式或各捷運站的服務臺辦理申請。"
    "根據交通局的統計，目前每天搭乘捷運的人次已經超過兩百萬，公車的載客量也逐年回升，"
    "若新方案順利推行，預估每年可以減少數萬公噸的二氧化碳排放量。不過也有學者提醒，"
    "政府在推動優惠的同時，必須同步改善轉乘的便利性與班距，否則民眾的使用意願恐怕難以提高。"
    "對此，市府回應將持續檢討路網規劃，增加偏遠地區的接駁路線，並研究在尖峰時段加開班次，"
    "希望讓每一位市民都能感受到更便捷、更環保的生活品質。"
)


def page(body: str, head: str = "", title: str = "新闻") -> str:
    return (
        f"<!DOCTYPE html>\n<html><head>{head}<title>{title}</title></head>\n"
        f"<body><h1>{title}</h1><div id='content'><p>{body}</p></div></body></html>\n"
    )


def meta(charset: str) -> str:
    return f'<meta http-equiv="Content-Type" content="text/html; charset={charset}">'


@pytest.fixture
def no_chardet(monkeypatch: pytest.MonkeyPatch) -> None:
    """The common paths must not reach chardet (~30 ms a page)."""

    def fail(data: bytes) -> str | None:
        raise AssertionError("chardet called")

    monkeypatch.setattr(encoding, "_chardet_guess", fail)


# --- GB pages -----------------------------------------------------------------


def test_gbk_page_with_correct_meta(no_chardet: None) -> None:
    html = page(NEWS, meta("gbk"))
    assert decode_html(html.encode("gbk")) == (html, "gb18030")


def test_html5_meta_charset(no_chardet: None) -> None:
    html = page(NEWS, '<meta charset="GB2312" />')
    assert decode_html(html.encode("gb2312")) == (html, "gb18030")


def test_declared_gb2312_with_gbk_only_characters(no_chardet: None) -> None:
    html = page(NEWS + GBK_ONLY, meta("gb2312"))
    with pytest.raises(UnicodeEncodeError):
        html.encode("gb2312")
    text, codec = decode_html(html.encode("gbk"))
    assert codec == "gb18030"
    assert "朱镕基" in text
    assert "张喆" in text
    assert text == html


def test_gbk_bytes_declared_utf8(no_chardet: None, caplog: pytest.LogCaptureFixture) -> None:
    html = page(NEWS + GBK_ONLY, '<meta charset="utf-8">')
    with caplog.at_level(logging.DEBUG, logger="newsspider.extraction.encoding"):
        assert decode_html(html.encode("gbk")) == (html, "gb18030")
    assert "overruled" in caplog.text


def test_overruled_declaration_names_what_the_page_declared(no_chardet: None) -> None:
    from newsspider.extraction.encoding import overruled_declaration

    gbk = page(NEWS + GBK_ONLY, '<meta charset="utf-8">').encode("gbk")
    assert overruled_declaration(gbk, None, decode_html(gbk)[1]) == "utf-8"
    # the header is the stronger declaration
    assert overruled_declaration(gbk, "text/html; charset=big5", "gb18030") == "big5"
    # a declaration that held, none at all, and a byte-order mark: nothing overruled
    right = page(NEWS, meta("gb2312")).encode("gb18030")
    assert overruled_declaration(right, None, decode_html(right)[1]) is None
    assert overruled_declaration(page(NEWS).encode("gbk"), None, "gb18030") is None
    bom = codecs.BOM_UTF8 + page(NEWS, meta("gbk")).encode()
    assert overruled_declaration(bom, None, decode_html(bom)[1]) is None


def test_gbk_bytes_undeclared(no_chardet: None) -> None:
    html = page(NEWS + GBK_ONLY)
    assert decode_html(html.encode("gbk")) == (html, "gb18030")


@pytest.mark.parametrize("label", ["GBK", "x-gbk", "gb_2312-80", "csGB2312", "cp936", "GB18030"])
def test_gb_labels_decode_as_gb18030(label: str) -> None:
    html = page(NEWS, meta(label))
    assert decode_html(html.encode("gbk")) == (html, "gb18030")


def test_gb18030_four_byte_characters() -> None:
    # "𠀀" (U+20000) needs a four-byte GB18030 sequence.
    html = page(NEWS + "𠀀", meta("gb2312"))
    assert decode_html(html.encode("gb18030")) == (html, "gb18030")


# --- Big5 ---------------------------------------------------------------------


def test_big5_bytes_pass_a_strict_gb18030_decode() -> None:
    """The trap of §B1's note: a GB18030 decode alone would accept these bytes."""
    TRADITIONAL.encode("big5").decode("gb18030")


def test_big5_page_declared() -> None:
    html = page(TRADITIONAL, meta("big5"), title="臺北擴大公共運輸優惠")
    assert decode_html(html.encode("big5")) == (html, "big5")


def test_big5_page_undeclared(no_chardet: None) -> None:
    html = page(TRADITIONAL, title="臺北擴大公共運輸優惠")
    assert decode_html(html.encode("big5")) == (html, "big5")


def test_big5_page_with_latin_header(no_chardet: None) -> None:
    html = page(TRADITIONAL, title="臺北擴大公共運輸優惠")
    data = html.encode("big5")
    assert decode_html(data, "text/html; charset=ISO-8859-1") == (html, "big5")


# --- byte-order marks ---------------------------------------------------------


def test_utf8_bom_wins_over_meta() -> None:
    html = page(NEWS, meta("gb2312"))
    assert decode_html(codecs.BOM_UTF8 + html.encode("utf-8")) == (html, "utf-8")


@pytest.mark.parametrize(
    ("codec", "bom"),
    [("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE)],
)
def test_utf16_bom(codec: str, bom: bytes) -> None:
    html = page(NEWS, '<meta charset="utf-16">')
    assert decode_html(bom + html.encode(codec), "text/html; charset=gbk") == (
        html,
        codec,
    )


def test_utf16_without_bom_is_text_not_binary() -> None:
    html = page(NEWS)
    assert decode_html(html.encode("utf-16-le")) == (html, "utf-16-le")


# --- declarations -------------------------------------------------------------


def test_header_charset_overrides_meta(no_chardet: None) -> None:
    html = page(NEWS, meta("big5"))
    assert decode_html(html.encode("gbk"), 'text/html; charset="GBK"') == (
        html,
        "gb18030",
    )


def test_header_charset_used_without_meta(no_chardet: None) -> None:
    html = page(TRADITIONAL, title="臺北擴大公共運輸優惠")
    assert decode_html(html.encode("big5"), "text/html;charset=big5") == (html, "big5")


def test_declared_gb2312_but_bytes_utf8(no_chardet: None, caplog: pytest.LogCaptureFixture) -> None:
    html = page(NEWS, meta("gb2312"))
    with caplog.at_level(logging.DEBUG, logger="newsspider.extraction.encoding"):
        assert decode_html(html.encode("utf-8")) == (html, "utf-8")
    assert "gb18030" in caplog.text


def test_header_gbk_but_bytes_utf8(no_chardet: None) -> None:
    html = page(NEWS)
    assert decode_html(html.encode("utf-8"), "text/html; charset=gbk") == (
        html,
        "utf-8",
    )


def test_latin1_header_on_gb_page_is_overruled(no_chardet: None) -> None:
    """Old servers sent a default "ISO-8859-1" for GB pages."""
    html = page(NEWS + GBK_ONLY)
    assert decode_html(html.encode("gbk"), "text/html; charset=ISO-8859-1") == (
        html,
        "gb18030",
    )
    html = page(NEWS, meta("gb2312"))
    assert decode_html(html.encode("gbk"), "text/html; charset=ISO-8859-1") == (
        html,
        "gb18030",
    )


@pytest.mark.parametrize("label", ["iso-8859-1", "latin-1", "us-ascii"])
def test_latin_declarations_mean_windows_1252(label: str, no_chardet: None) -> None:
    html = page(
        "\u201cCaf\u00e9\u201d, na\u00efve \u2014 \u20ac5, s\u2019il vous pla\u00eet.",
        meta(label),
        title="Menu",
    )
    text, codec = decode_html(html.encode("cp1252"))
    assert (text, codec) == (html, "windows-1252")


def test_windows_1252_undefined_bytes_do_not_fail() -> None:
    data = page("x \x81 y", meta("iso-8859-1"), title="t").encode("latin-1") + b"\xe9"
    text, codec = decode_html(data)
    assert codec == "windows-1252"
    assert text.endswith("\u00e9")
    assert "\ufffd" not in text


@pytest.mark.parametrize(
    "label", ["x-foo", "base64", "rot13", "utf-7", "undefined", "cp037", "utf-16"]
)
def test_unknown_or_unusable_charset_in_meta_is_ignored(label: str) -> None:
    html = page(NEWS, meta(label))
    assert decode_html(html.encode("gbk")) == (html, "gb18030")
    assert decode_html(html.encode("utf-8")) == (html, "utf-8")


def test_unknown_charset_in_header_is_ignored() -> None:
    html = page(NEWS, meta("gbk"))
    assert decode_html(html.encode("gbk"), "text/html; charset=x-foo") == (
        html,
        "gb18030",
    )


def test_xml_declaration() -> None:
    html = '<?xml version="1.0" encoding="gb2312"?>\n' + page(NEWS)
    assert decode_html(html.encode("gbk")) == (html, "gb18030")


def test_ascii_page_reports_declared_or_utf8() -> None:
    html = page("Hello", title="t")
    assert decode_html(html.encode("ascii")) == (html, "utf-8")
    assert decode_html(html.encode("ascii"), "text/html; charset=gbk") == (
        html,
        "gb18030",
    )


def test_utf8_undeclared_english(no_chardet: None) -> None:
    html = page("It\u2019s a caf\u00e9 \u2014 naïve r\u00e9sum\u00e9.", title="Caf\u00e9")
    assert decode_html(html.encode("utf-8")) == (html, "utf-8")


# --- broken bytes and binary input --------------------------------------------


def test_few_nul_bytes_and_broken_gb_sequence_decode_with_replacement() -> None:
    html = page(NEWS * 3, meta("gb2312"))
    data = html.encode("gbk")
    cut = data.index("会议指出".encode("gbk"))
    data = data[:cut] + b"\x00\x00\xb9" + b"<" + data[cut:] + b"\x00"
    text, codec = decode_html(data)
    assert codec == "gb18030"
    assert "\ufffd" in text
    assert NEWS[:20] in text
    assert text.count("\ufffd") <= 2


def test_utf8_page_with_one_broken_byte(no_chardet: None) -> None:
    html = page(NEWS * 3)
    data = html.encode("utf-8")
    cut = data.index("会议".encode())
    data = data[:cut] + b"\xff" + data[cut:]
    text, codec = decode_html(data)
    assert codec == "utf-8"
    assert text.count("\ufffd") == 1


def test_truncated_utf8_page() -> None:
    data = page(NEWS * 3).encode("utf-8")[:-30]
    data = data[: data.rindex("。".encode()) + 3]
    data += "稳".encode()[:2]  # cut inside the last character
    text, codec = decode_html(data)
    assert codec == "utf-8"
    assert text.count("\ufffd") == 1


@pytest.mark.parametrize("data", [b"", b"   \r\n\t ", codecs.BOM_UTF8, codecs.BOM_UTF8 + b"\n"])
def test_empty_input_raises(data: bytes) -> None:
    with pytest.raises(ExtractionError, match="empty"):
        decode_html(data)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (
            b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n",
            "PDF",
        ),
        (
            b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
            "JPEG",
        ),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "PNG"),
        (b"GIF89a\x01\x00\x01\x00\x80\x00\x00", "GIF"),
        (b"PK\x03\x04\x14\x00\x00\x00\x08\x00", "ZIP"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", "gzip"),
    ],
)
def test_binary_signatures_raise(data: bytes, kind: str) -> None:
    with pytest.raises(ExtractionError, match=kind):
        decode_html(data, "text/html; charset=utf-8")


def test_control_bytes_raise() -> None:
    data = bytes(range(256)) * 40
    with pytest.raises(ExtractionError, match="control bytes"):
        decode_html(b"<html>" + data)


def test_extraction_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        decode_html(b"")


# --- speed: the common path never reaches chardet -----------------------------


def test_large_pages_do_not_reach_chardet(no_chardet: None) -> None:
    body = "".join(f"<p>{NEWS}</p>\n" for _ in range(300))
    for codec, head in [
        ("gbk", meta("gb2312")),
        ("gbk", ""),
        ("utf-8", meta("gbk")),
        ("utf-8", ""),
    ]:
        html = page(body, head)
        assert decode_html(html.encode(codec))[0] == html


# --- the shared datasets ------------------------------------------------------


def _cases() -> list[tuple[Path, dict]]:
    return [
        (cases.parent, case)
        for cases in sorted(DATASETS.glob("*/cases.jsonl"))
        for case in map(json.loads, cases.read_text("utf-8").splitlines())
    ]


def test_dataset_pages_decode_cleanly() -> None:
    if not DATASETS.is_dir():
        pytest.skip(f"shared datasets not found at {DATASETS}")
    cases = _cases()
    assert cases
    failures = []
    for folder, case in cases:
        raw = (folder / case["html_file"]).read_bytes()
        text, codec = decode_html(raw)
        expected = "gb18030" if case["encoding"] in GB_ENCODINGS else case["encoding"]
        # U+FFFD that the page itself contains (some UTF-8 pages do) is not ours.
        in_source = raw.count("\ufffd".encode(expected))
        broken = re.search(r"broken|undecodable|invalid byte", case["notes"] or "", re.I)
        replaced = text.count("\ufffd") - in_source
        if codec != expected or (replaced and not broken):
            failures.append((case["id"], case["encoding"], codec, replaced))
    assert not failures


def test_dataset_broken_gb_page_is_gb18030_with_few_replacements() -> None:
    if not DATASETS.is_dir():
        pytest.skip(f"shared datasets not found at {DATASETS}")
    broken = [
        (folder, case)
        for folder, case in _cases()
        if re.search(r"undecodable|broken", case["notes"] or "", re.I)
    ]
    assert broken
    for folder, case in broken:
        text, codec = decode_html((folder / case["html_file"]).read_bytes())
        assert codec == "gb18030"
        assert 0 < text.count("\ufffd") < 10
