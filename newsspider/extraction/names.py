"""Personal names: what a byline's value is, and what it is not.

A byline names people (``记者 伊琳 李清芬``); the same slot on other pages holds a role,
an agency, a date or a template's leftovers (``L_104485``, ``Discuz! Team``). These
checks keep the names and drop the rest, so that no name is better than a wrong one:

* :func:`is_chinese_name`: two to four Han characters opening with a common surname
  (single or compound, in either script), or a transliterated name with a middle dot
  (``阿卜杜·热合曼``); never a word that ends like an organisation (社, 报, 网 ...).
* :func:`is_handle`: what a labelled slot (``作者：``) may hold besides a Chinese name: a
  user name (``zboygirl``, ``放飞&心情``) or a Latin-script name (``Joel Spolsky``).
* :func:`split_names`: a byline's value cut into names, up to the first word that is
  not one.

Pure: the standard library and OpenCC (the traditional forms of the surnames).
"""

from __future__ import annotations

import re
import unicodedata

import opencc

__all__ = [
    "COMPOUND_SURNAMES",
    "SURNAMES",
    "is_chinese_name",
    "is_handle",
    "is_latin_name",
    "normalise_name",
    "split_names",
]

#: Common single-character surnames (the great majority of China's population), simplified.
_SURNAMES_SIMPLIFIED = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖萧田董袁潘于蒋蔡余"
    "杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付傅方白邹孟熊秦邱江尹薛闫阎段雷侯龙"
    "史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟"
    "殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛"
    "靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜"
    "冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查"
    "麻苑迟邝官封谈匡鞠惠荆乐冀郁胥南班储原栗燕楚鄢劳谌奚皮粟冼蔺楼盘满闻位厉伊仝区郜海阚"
    "花权强帅屠豆朴盖练廉禹井祖漆巴丰支卿国狄平计索宣晋相初门云容敬来扈晁芮都普阙浦戈伏鹿"
    "薄邸雍辜羊乌母裘亓修邰赫杭况那宿鲜印逯隆茹诸战慕危玉银亢嵇公哈湛宾戎勾茅利於呼居揭干"
    "但尉冶斯元束檀衣信展阴昝智幸奉植衡富尧闭由洪黄苏骆樊鞠麦甘邓柯符喻泮滑蓟郦郗蓬衡庹"
    # the rest of the Hundred Family Surnames (百家姓) that are not everyday words
    "风凤贝钮荀羿邴隗宓牧仰钭韶咸籍赖苍莘贡扶堵璩濮扈郏宦庾暨弘匡寇禄阙殳沃蔚夔厍訾阚毋乜巢蒯桓酆"
)
#: Compound surnames, simplified.
_COMPOUND_SIMPLIFIED = (
    "欧阳 司马 上官 诸葛 东方 皇甫 尉迟 公孙 慕容 长孙 宇文 司徒 令狐 夏侯 端木 轩辕 独孤 "
    "南宫 西门 百里 呼延 万俟 澹台 公冶 宗政 濮阳 太史 申屠 钟离 闾丘 东郭 司空 第五"
).split()

_S2T = opencc.OpenCC("s2t")
#: Single-character surnames in both scripts.
SURNAMES = frozenset(_SURNAMES_SIMPLIFIED) | frozenset(_S2T.convert(_SURNAMES_SIMPLIFIED))
#: Compound surnames in both scripts.
COMPOUND_SURNAMES = frozenset(_COMPOUND_SIMPLIFIED) | frozenset(
    _S2T.convert(" ".join(_COMPOUND_SIMPLIFIED)).split()
)

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_NAME = re.compile(f"[{_HAN}]{{2,4}}")
# A transliterated name: parts of Han characters joined by a middle dot (阿卜杜·热合曼).
_DOTTED_NAME = re.compile(f"[{_HAN}]{{1,8}}(?:[·・•‧][{_HAN}]{{1,8}}){{1,3}}")
#: Endings and parts that make a word an organisation, a place or a role, not a person.
_NOT_PERSON_SIMPLIFIED = (
    r"(?:社|报|網|网|台|站|刊|部|局|厅|处|办|院|所|会|委|团|队|组|号|讯"
    r"|中心|公司|集团|大学|学院|学校"
    r"|政府|频道|新闻|日报|晚报|时报|周刊|杂志|电视|广播|在线|记者|编辑|通讯员|作者|来源|综合|整理"
    r"|报道|报导|摄影|图片|视频|客户端|网友|读者|本报|本刊|本网|原创|转载|供图|特约|实习生|评论员)$"
    r"|^(?:本报|本刊|本网|本台|特约|实习|新华|中新|人民|央视|中央社|记者|编辑|作者|来源|图片|视频)"
)
_NOT_PERSON = re.compile(
    "|".join(
        dict.fromkeys(  # the simplified endings and their traditional forms (報, 網, 記者)
            [
                _NOT_PERSON_SIMPLIFIED,
                _S2T.convert(_NOT_PERSON_SIMPLIFIED),
                opencc.OpenCC("s2twp").convert(_NOT_PERSON_SIMPLIFIED),
            ]
        )
    )
)
# A user name or a name in another script: letters, digits after the first letter, and
# the joiners user names use; no spaces (a Latin name's words are checked one by one).
_HANDLE = re.compile(rf"[A-Za-z{_HAN}][\w&.\-·'’{_HAN}]{{0,23}}")
_LATIN_WORD = re.compile(
    r"(?:[A-Z][a-z'’\-]+|[A-Z]\.|[A-Z][a-z]*[A-Z][a-z]+"
    r"|(?:van|von|de|da|del|der|di|le|la|bin|al)\b)"
)
#: Words a labelled slot holds that are not a name (what follows a byline on one line).
LABEL_WORDS = frozenset(
    "阅读 评论 点击 编辑 来源 时间 日期 发布 发表 发表于 更新 字号 打印 分享 收藏 关闭 "
    "浏览 人气 回复 查看 文章 原文 作者 记者 通讯员 摄影 责任编辑 责编 出处 稿源 "
    "By by and AND Updated Published Posted".split()
)


def _surname_ok(name: str) -> bool:
    return name[0] in SURNAMES or name[:2] in COMPOUND_SURNAMES


_ORG_PART = re.compile(r"新闻|政务|频道|网|报|社|号|台|App|APP")
#: The first syllables of Tibetan names, four characters long (格桑边觉, 次仁罗布, 扎西多吉),
#: which open with no surname.
_TIBETAN_STARTS = frozenset("格次扎索旺尼洛卓央嘎措泽琼顿益群普达丹多白边拉强贡巴米德阿")


def is_chinese_name(word: str) -> bool:
    """Whether ``word`` is a Chinese personal name (see the module doc)."""
    if _DOTTED_NAME.fullmatch(word):
        parts = re.split("[·・•‧]", word)
        return len(word) <= 12 and not any(
            _NOT_PERSON.search(p) or _ORG_PART.search(p) for p in parts
        )
    if not _HAN_NAME.fullmatch(word) or _NOT_PERSON.search(word) or word in NOT_NAMES:
        return False
    return _surname_ok(word) or (len(word) == 4 and word[0] in _TIBETAN_STARTS)


#: What a writer's slot holds when it names nobody.
_NOT_NAMES = (
    "佚名 匿名 不详 未知 无名 网友 游客 管理员 系统管理员 超级管理员 "
    "admin Admin administrator 本站 本网 编者 小编 综合 原创 转载 整理 供稿 来稿 投稿"
)
NOT_NAMES = frozenset(_NOT_NAMES.split()) | frozenset(_S2T.convert(_NOT_NAMES).split())
_HAN_HANDLE = re.compile(f"[{_HAN}]{{2,6}}")


#: Words of an agency's, a desk's or a role's name, never of a person's (lower case).
NOT_NAME_WORDS = frozenset(
    "the a an of for and by press associated reuters ap afp upi staff staffs reports report "
    "sources source writer writers reporter reporters editor editors editorial "
    "correspondent correspondents contributor contributors columnist columnists insider "
    "business news newsroom bureau agency agencies team desk service services sport sports "
    "weekly daily times post journal magazine media network online wire wires group inc ltd "
    "llc company corp foundation society association institute university space national "
    "security political auto senior chief special guest opinion admin administrator "
    "multiple nation international world local global digital web radio tv television "
    "channel feed partner sponsored content brand studio studios lab labs official blog".split()
)


#: The names of the multilingual set's bylines (rules registry: ``latin_names``): letters
#: beyond ASCII (``Holger Zschäpitz``, ``Lê Phương``), double names (``Anne-Kathrin
#: Neuberg-Vural``, ``Victoria O’Regan``), a surname in capitals (``Bill MCCARTHY``), the
#: particles of other languages (``dos``, ``af``) and an academic title (``Dr. Max Kolter``).
LATIN_NAMES = True
_LATIN_LETTERS = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"
_LATIN_PART = re.compile(f"[{_LATIN_LETTERS}]+")
_PARTICLES = frozenset(
    "van von de da del della der den di du des dos das do le la bin binti al el ter ten zu "
    "af av y".split()
)
_TITLES = frozenset("Dr. Prof. Dr Prof Dres. Mag. Ing. Dipl.-Ing.".split())


#: A capital after three small letters inside a word: two words run together
#: (``Jervis-BardyThe``), not ``McCarthy``, ``MacDonald`` or ``DeShawn``.
_RUN_TOGETHER = re.compile(r"(?:^|[-'’])[A-Z][a-z]{3,}[A-Z]")


def _latin_word(word: str) -> bool:
    """A word of a Latin-script name (see :data:`LATIN_NAMES`)."""
    if LATIN_NAMES and _RUN_TOGETHER.search(word):  # ``ExnerKorrespondent``: two words
        return False
    if _LATIN_WORD.fullmatch(word):
        return True
    if not LATIN_NAMES:
        return False
    if word in _PARTICLES:
        return True
    if len(word) == 2 and word[1] == "." and word[0].isupper() and word[0].isalpha():
        return True  # an initial beyond ASCII: Ö.
    if len(word) < 2:  # a letter alone is an initial only with its dot
        return False
    parts = re.split(r"[-'’]", word)
    return (
        word[0].isupper()
        and all(_LATIN_PART.fullmatch(p) for p in parts)
        and all(
            p[0].isupper() or len(parts) == 1 or (i > 0 and p.islower())
            for i, p in enumerate(parts)
        )
    )


def is_latin_name(words: list[str]) -> bool:
    """Whether ``words`` are a personal name in Latin script: two to four capitalised words
    (``Joel Spolsky``, ``J. R. Smith``, ``Ludwig van Beethoven``, with :data:`LATIN_NAMES`
    ``Holger Zschäpitz``, ``Per-Erik Ofstad``, ``Bill MCCARTHY``, ``Dr. Max Kolter``), none
    of an agency's, desk's or role's name (``Associated Press``, ``Telegraph Sport``, ``AP
    Sports Writer``), not all in capitals (``NEW YORK``)."""
    if LATIN_NAMES and len(words) > 2 and words[0] in _TITLES:
        words = words[1:]
    return (
        2 <= len(words) <= 4
        and all(_latin_word(w) for w in words)
        and words[0][0].isupper()
        and not any(w.lower().strip(".") in NOT_NAME_WORDS for w in words)
        and (not LATIN_NAMES or any(not w.isupper() for w in words if len(w) > 2))
        and (not LATIN_NAMES or words[-1].lower() not in _PARTICLES)  # never ends ``von``
    )


def is_handle(word: str, *, han: bool = False) -> bool:
    """Whether ``word`` may be a writer's user name in a labelled slot (``作者：zboygirl``).
    Han characters alone make one only with ``han`` (a ``作者：`` slot: ``作者：芊草凡凡``),
    two to six of them, not a role or an organisation; else they must be a name."""
    if word in LABEL_WORDS or word in NOT_NAMES or not _HANDLE.fullmatch(word):
        return False
    if re.search(f"[{_HAN}]", word) and not re.search(r"[A-Za-z0-9&_.\-·]", word):
        # Han only: a name, or (``han``) a user name that is no role or organisation
        if is_chinese_name(word):
            return True
        return han and bool(_HAN_HANDLE.fullmatch(word)) and not _NOT_PERSON.search(word)
    return not _NOT_PERSON.search(word) and word.lower() not in NOT_NAME_WORDS


# What separates names in a byline's value.
_NAME_SEPARATORS = re.compile(r"\s*[、，,;；/／|｜]\s*|\s+")
_BRACKETED = re.compile(r"\s*[(（\[【][^)）\]】]{0,40}[)）\]】]")


def split_names(value: str, *, strict: bool, han_handles: bool = False) -> list[str]:
    """The names a byline's value begins with.

    The value is cut at spaces and 、，,;；/; bracketed parts (a name in another script:
    ``周思博 (Joel Spolsky)``) are dropped. Names are taken while each word is one
    (``strict``: Chinese names only; else user names and Latin-script names too, whose
    two to four capitalised words are read as one name; ``han_handles``: user names of
    Han characters too, :func:`is_handle`); the first word that is not ends them.
    """
    value = _BRACKETED.sub(" ", value)
    words = [w for w in _NAME_SEPARATORS.split(value.strip()) if w]
    names: list[str] = []
    i = 0
    while i < len(words) and len(names) < 8:
        word = words[i].strip("·・•:：.。")
        if is_chinese_name(word):
            names.append(word)
            i += 1
            continue
        if not strict:
            for n in (4, 3, 2):  # a Latin-script name of n words
                if i + n <= len(words) and is_latin_name(words[i : i + n]):
                    names.append(" ".join(words[i : i + n]))
                    i += n
                    break
            else:
                if is_handle(word, han=han_handles and not names):
                    names.append(word)
                    i += 1
                    continue
                break
            continue
        break
    return names


def normalise_name(name: str) -> str:
    """A name as compared: NFKC, bracketed parts and spaces dropped, lower case."""
    name = _BRACKETED.sub("", unicodedata.normalize("NFKC", name))
    return "".join(name.split()).lower()
