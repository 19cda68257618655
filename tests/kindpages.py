"""Pages of each kind written in real portals' markup (the text invented), for the page-kind
tests: Sina's slide gallery (``#eData``), NetEase's photoview (``gallery-data``), a gallery of
figures, Tencent's video page (a ``txp`` player iframe), a page stating ``VideoObject``, a 图文
直播 page, a 专题 page and a rolling list, each inside a portal's navigation, and articles
beside a player or with pictures (which stay articles)."""

from __future__ import annotations

import json
from collections.abc import Sequence

#: A portal's channel bar and related-news block: every page below carries them.
NAV = "".join(
    f'<li><a href="/list/{k}.html">{name}</a></li>'
    for k, name in enumerate(["首页", "国内", "国际", "军事", "财经", "科技", "体育", "娱乐"])
)
RELATED = [
    "国家统计局发布前四个月国民经济运行情况",
    "多地出台新政支持住房消费提振市场信心",
    "暴雨预警升级南方多省启动应急响应",
    "新能源汽车出口量同比增长超过三成",
    "教育部部署做好高校毕业生就业工作",
    "铁路部门五一假期运送旅客创历史新高",
]


def page(title: str, body: str, head: str = "", related: Sequence[str] = RELATED) -> str:
    links = "".join(f'<li><a href="/other/r{k}.html">{t}</a></li>' for k, t in enumerate(related))
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>{head}</head>'
        f'<body><div class="top-nav"><ul>{NAV}</ul></div>{body}'
        f'<div class="side"><h3>相关新闻</h3><ul>{links}</ul></div>'
        '<div class="footer"><p>Copyright © 1996-2024 本地新闻网 版权所有</p></div></body></html>'
    )


GALLERY_CAPTIONS = [
    "4月28日，江西婺源篁岭景区的油菜花进入盛花期，层层梯田如金色海洋。",
    "游客在花海间的栈道上漫步拍照，感受乡村春色。",
    "无人机航拍下的古村落与花田相映成趣，白墙黛瓦点缀其间。",
    "当地村民在田间劳作，油菜籽将在五月下旬收割。",
    "夕阳下的花海与远山构成一幅宁静的田园画卷。",
]


def sina_slide(captions: Sequence[str] = GALLERY_CAPTIONS) -> str:
    """Sina's slide page: the viewer's data in ``#eData``, one ``dl`` per picture."""
    items = "".join(
        f"<dl><dt>航拍春日油菜花海</dt>"
        f"<dd>https://n.sinaimg.cn/news/transform/20240501/p{k}.jpg</dd>"
        f"<dd>https://n.sinaimg.cn/news/transform/20240501/p{k}_thumb.jpg</dd>"
        f"<dd>https://slide.news.sina.com.cn/slide_1_86058_{k}.html</dd>"
        f"<dd>{c}</dd><dd>slidenews-album-86058-{k}</dd></dl>"
        for k, c in enumerate(captions)
    )
    body = (
        f'<div id="eData" style="display:none">{items}</div>'
        '<div class="swpt-main"><div id="swpt-img"><img src="" alt=""></div>'
        '<div class="swpt-text" id="swpt-text"></div></div>'
    )
    return page("航拍春日油菜花海_高清图集_新浪网", body)


def netease_photoview(captions: Sequence[str] = GALLERY_CAPTIONS) -> str:
    """NetEase's photoview page: the gallery as JSON in a hidden textarea."""
    data = {
        "info": {"setname": "航拍春日油菜花海", "imgsum": len(captions)},
        "list": [
            {
                "id": f"p{k}",
                "title": "",
                "note": c,
                "img": f"https://cms-bucket.ws.126.net/p{k}.jpg",
            }
            for k, c in enumerate(captions)
        ],
    }
    body = (
        f'<textarea name="gallery-data" style="display:none;">'
        f"{json.dumps(data, ensure_ascii=False)}</textarea>"
        '<div class="nph_gallery"><div class="nph_photo_view"><img src="" alt=""></div></div>'
    )
    return page("航拍春日油菜花海_网易新闻", body)


def figure_gallery(captions: Sequence[str] = GALLERY_CAPTIONS) -> str:
    """A 组图 page: pictures in figures with their captions and nothing else."""
    figures = "".join(
        f'<figure><img src="https://img.example.cn/2024/05/{k}.jpg" width="800" height="533">'
        f"<figcaption>{c}</figcaption></figure>"
        for k, c in enumerate(captions)
    )
    body = f'<div class="article"><h1>航拍春日油菜花海</h1>{figures}</div>'
    return page("组图｜航拍春日油菜花海", body)


VIDEO_DESCRIPTION = "5月1日，首届城市龙舟邀请赛在滨江公园开赛，来自全国的24支队伍同场竞技。"
STATED_DESCRIPTION = "邀请赛决赛中，来自沿江城市的两支队伍鼓声震天，最终以0.3秒之差分出胜负。"


def tencent_video() -> str:
    """Tencent's video page: the ``txp`` player iframe and a one-line description."""
    body = (
        '<div class="mod_player"><iframe frameborder="0" width="640" height="360" '
        'src="https://v.qq.com/txp/iframe/player.html?vid=x0035abcd12" allowfullscreen>'
        "</iframe></div>"
        '<div class="video-info"><h1>首届城市龙舟邀请赛开赛</h1>'
        f'<p class="desc">{VIDEO_DESCRIPTION}</p></div>'
    )
    head = f'<meta name="description" content="{VIDEO_DESCRIPTION}">'
    return page("视频｜首届城市龙舟邀请赛开赛_腾讯新闻", body, head)


def jsonld_video() -> str:
    """A page that states ``VideoObject`` in JSON-LD, with an HTML5 player."""
    ld = {
        "@context": "https://schema.org",
        "@type": "VideoObject",
        "name": "城市龙舟邀请赛精彩瞬间",
        "description": STATED_DESCRIPTION,
        "uploadDate": "2024-05-01T10:00:00+08:00",
        "contentUrl": "https://v.example.cn/2024/0501/boat.mp4",
    }
    head = f'<script type="application/ld+json">{json.dumps(ld, ensure_ascii=False)}</script>'
    body = (
        '<div class="player-box"><video controls src="https://v.example.cn/2024/0501/boat.mp4">'
        "</video></div><h1>城市龙舟邀请赛精彩瞬间</h1>"
    )
    return page("城市龙舟邀请赛精彩瞬间", body, head)


LIVE_ENTRIES = [
    ("09:00", "大会开幕，主持人宣布会议议程，全体起立奏唱国歌。"),
    ("09:05", "政府工作报告开始，报告回顾了过去一年经济社会发展的主要成就。"),
    ("09:30", "报告提出今年国内生产总值增长预期目标为百分之五左右。"),
    ("09:48", "报告强调，要大力推进现代化产业体系建设，加快发展新质生产力。"),
    ("10:15", "报告指出，要坚持教育强国、科技强国、人才强国建设一体统筹推进。"),
    ("10:40", "报告提出，切实保障和改善民生，加强社会建设。"),
    ("11:02", "政府工作报告结束，大会审查国民经济和社会发展计划报告。"),
]


def live_page(entries: Sequence[tuple[str, str]] = LIVE_ENTRIES) -> str:
    """A 图文直播 page: time-stamped entries, newest first as portals show them."""
    items = "".join(
        f'<li class="live-item"><span class="time">{t}</span><div class="text">{x}</div></li>'
        for t, x in reversed(entries)
    )
    body = (
        '<div class="live-box"><h1>十四届全国人大二次会议开幕会</h1>'
        f'<ul class="live-list">{items}</ul></div>'
    )
    return page("图文直播｜十四届全国人大二次会议开幕会", body)


TOPIC_HEADLINES = [
    "代表委员热议政府工作报告：发展目标振奋人心",
    "两会现场：科技创新成为代表委员关注热点",
    "数说两会：一组数据看过去一年民生答卷",
    "两会声音：让乡村振兴的成果惠及更多农民",
    "部长通道：回应百姓关切的教育医疗问题",
]
OLDER = [f"往届两会回顾：第{k}次会议重要议程和成果一览" for k in range(1, 9)]


def topic_page(article_hrefs: Sequence[str], lead: str = "") -> str:
    """A 专题 page: a lead, sections of headline links (the articles), older coverage."""
    first = "".join(
        f'<li><a href="{h}">{t}</a></li>'
        for h, t in zip(article_hrefs, TOPIC_HEADLINES, strict=False)
    )
    older = "".join(
        f'<li><a href="/special/old-{k}.html">{t}</a></li>' for k, t in enumerate(OLDER)
    )
    body = (
        '<div class="zt-banner"><h1>2024全国两会</h1></div>'
        f'<div class="zt-lead"><p>{lead}</p></div>'
        f'<div class="zt-section"><h2>最新报道</h2><ul>{first}</ul></div>'
        f'<div class="zt-section"><h2>往期回顾</h2><ul>{older}</ul></div>'
    )
    return page("2024全国两会专题_本地新闻", body)


LIST_HEADLINES = [
    "多地出台措施稳就业促增收",
    "今年一季度对外贸易实现平稳开局",
    "气象台发布大风蓝色预警提醒出行注意安全",
    "全国铁路今日预计发送旅客一千八百万人次",
    "中小学暑期托管服务覆盖范围持续扩大",
    "城市更新行动推进老旧小区改造提速",
    "科研团队在量子通信领域取得新突破",
    "夏粮收购工作全面展开收购进度快于去年",
    "景区门票预约制度进一步优化",
    "公共充电桩数量同比增长六成",
    "国产大飞机完成新一轮验证飞行",
    "跨境电商综合试验区再扩容",
]


def list_page(article_hrefs: Sequence[str]) -> str:
    """A rolling list: headline links with their times, and a pager."""
    items = "".join(
        f'<li><a href="{article_hrefs[k] if k < len(article_hrefs) else f"/other/l{k}.html"}">'
        f'{t}</a><span class="time">2024-05-01 0{k % 10}:00</span></li>'
        for k, t in enumerate(LIST_HEADLINES)
    )
    body = (
        f'<div class="news-list"><ul>{items}</ul></div>'
        '<div class="pages"><a href="/list/roll-2.html">下一页</a> '
        '<a href="/list/roll-9.html">尾页</a></div>'
    )
    return page("滚动新闻_本地新闻", body)


ARTICLE_PARAGRAPHS = [
    "记者从市交通运输局获悉，今年五一假期全市公共交通运送乘客超过八百万人次，同比增长百分之十二。",
    "据介绍，假期期间地铁延长运营时间，公交线路加密发车班次，重点景区开通了旅游专线。",
    "交通部门表示，将继续优化线网布局，提升市民和游客的出行体验。",
]


def article_with_player() -> str:
    """A news article with a sidebar video player: still an article."""
    paras = "".join(f"<p>{p}</p>" for p in ARTICLE_PARAGRAPHS)
    body = (
        '<div class="article"><h1>五一假期公共交通客流创新高</h1>'
        f'<div class="content">{paras}</div></div>'
        '<div class="side-video"><iframe src="https://v.qq.com/txp/iframe/player.html?vid=y0012"'
        ' width="300" height="200"></iframe></div>'
    )
    return page("五一假期公共交通客流创新高_本地新闻", body)


def article_with_pictures() -> str:
    """A news article with three pictures among its paragraphs: still an article."""
    parts = []
    for k, p in enumerate(ARTICLE_PARAGRAPHS):
        parts.append(f"<p>{p}</p>")
        parts.append(
            f'<p><img src="https://img.example.cn/2024/05/t{k}.jpg" width="640" height="400"></p>'
            f"<p>图为市民乘坐地铁出行（记者 摄）</p>"
        )
    body = f'<div class="article"><h1>五一假期公共交通客流创新高</h1>{"".join(parts)}</div>'
    return page("图片新闻：五一假期公共交通客流创新高", body)
