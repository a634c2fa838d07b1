"""Synthetic news and blog pages with a known publication date, for bench/bench_dates.py.

Each page comes from one of 16 made-up sites; a site fixes the language, the local time zone
(with summer time where the region has it), the CMS template and its date habits:

- templates: WordPress (Yoast JSON-LD graph, ``og``/``article`` tags, ``<time class="entry-date">``),
  a news CMS (JSON-LD and tags in UTC, a byline with the local time and zone), Blogger
  (``date-header``, ``abbr.published``), Drupal ("Submitted by ... on Fri, 10/18/2019 - 22:04"),
  a static page (a dated paragraph, sometimes with no class at all), a press release (a numeric
  ``<meta name="date">``), XHTML 1.0 with an XML declaration, and CJK news sites;
- how instants are written: with the local offset, in UTC (``Z``), or as naive local time.

and each page draws its own noise, with the probabilities in ``NOISE``: JSON-LD giving an earlier
first version, ``article:published_time`` rewritten on a republish, a URL dated the day before,
related-story and "most read" sidebars with other dates, a masthead showing the crawl day,
reader comments dated after the article, earlier dates mentioned in the body, modification dates
(tags, JSON-LD, a visible "Updated" line, the ``Last-Modified`` header), no structured data at
all, no date at all, and web-archive copies. Pages are written in the site's encoding
(UTF-8, windows-1252, Shift_JIS, GB18030, UTF-16), declared in a ``<meta charset>`` or the
header.

The true date is the local calendar day of publication. The gold text is the headline and the
article paragraphs. Nothing here reads real pages: the generator encodes its author's idea of
how pages go wrong, so its numbers show which failure modes a method handles, not how often
they occur on the web.

    python bench/date_pages.py --out DIR [--n 800] [--seed 13] [--lean]

Pages carry the weight real pages do around the article (``bulk``: scripts, styles, a mega menu,
widgets, ad slots, footer links; median about 60 KB); ``--lean`` leaves it out (about 5 KB).

writes ``DIR/NNNN.html`` (bytes) and ``DIR/manifest.json`` (the schema of tests/pages/pages.json:
file, class, url, headers, date, text).
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import json
import random
from dataclasses import dataclass
from pathlib import Path

NOISE = {
    "jsonld_first_version": 0.05,
    "meta_republished": 0.03,
    "url_day_before": 0.05,
    "related": 0.45,
    "masthead_today": 0.15,
    "comments": 0.25,
    "body_dates": 0.6,
    "modified": 0.5,
    "updated_line": 0.15,
    "last_modified_header": 0.3,
    "no_structured": 0.1,
    "undated": 0.02,
    "archive": 0.05,
    "utf16": 0.02,
    "no_lang": 0.2,
}


@dataclass(frozen=True)
class Site:
    host: str
    lang: str  # BCP 47 tag, "" for none
    offset: int  # standard offset, minutes east of UTC
    dst: bool  # +60 min from April to October
    template: str
    instants: str  # "local", "utc" or "naive": how the CMS writes times
    encoding: str = "utf-8"
    url_date: bool = False


SITES = (
    Site("dailyherald.example.com", "en-US", -300, True, "wordpress", "local", url_date=True),
    Site("metroreport.example.com", "en-US", -480, True, "newscms", "utc"),
    Site("valleygazette.example.com", "en", -360, True, "drupal", "naive"),
    Site("citypress.example.gov", "en-US", -300, True, "press", "naive"),
    Site("northernecho.example.co.uk", "en-GB", 0, True, "newscms", "utc"),
    Site("shirenews.example.co.uk", "en-GB", 0, True, "press", "naive"),
    Site("thoughts.example.blogspot.com", "en", -300, True, "blogger", "local", url_date=True),
    Site("rheinpost.example.de", "de-DE", 60, True, "wordpress", "local", "windows-1252", True),
    Site("alpenblatt.example.at", "de", 60, True, "static", "naive"),
    Site("lequotidien.example.fr", "fr-FR", 60, True, "newscms", "utc", "windows-1252"),
    Site("elfaro.example.es", "es", 60, True, "drupal", "local"),
    Site("minato.example.jp", "ja", 540, False, "cjk", "utc", "shift_jis"),
    Site("huanan.example.cn", "zh-CN", 480, False, "cjk", "utc", "gb18030"),
    Site("w3archive.example.org", "en", 0, True, "xhtml", "local"),
    Site("smalltown.example.com", "", -360, True, "static", "naive"),
    Site("techblog.example.io", "en", 120, False, "wordpress", "utc", url_date=True),
)

EN_SUBJ = ["The city council", "The county board", "Local residents", "The school district", "Officials", "The transport agency", "A group of volunteers", "The mayor", "Hospital managers", "The regional government", "Shop owners", "The water company"]  # fmt: skip
EN_VERB = ["approved", "rejected", "debated", "postponed", "announced", "criticised", "welcomed", "reviewed", "questioned", "defended"]  # fmt: skip
EN_OBJ = ["a plan to expand the bus network", "the annual budget", "new rules for short-term rentals", "a proposal to close the library on Mondays", "funding for two new schools", "changes to parking charges", "a new cycle lane on the main road", "the sale of the old fire station", "a study of flood defences", "the opening hours of the swimming pool"]  # fmt: skip
EN_TAIL = ["after a long debate", "despite objections from several businesses", "following a public consultation", "at a packed meeting", "with little discussion", "ahead of the summer holidays", "for the second time this year"]  # fmt: skip
EN_MORE = ["The project is expected to cost {n} million and take {m} months.", "About {n} people attended the meeting, and {m} of them spoke.", "Critics said the decision came too late for families already affected.", "Supporters argued that the change would save money within {m} years.", "A final vote is planned after the consultation closes.", "The council said it would publish the full report online.", "Several residents asked for the plans to be explained in more detail."]  # fmt: skip
DE = ["Der Gemeinderat hat den Haushalt nach langer Debatte beschlossen.", "Die Kosten werden auf {n} Millionen Euro geschätzt.", "Anwohner hatten sich über den Lärm beschwert.", "Die Verwaltung will die Pläne im Herbst vorstellen.", "Mehrere Fraktionen stimmten gegen den Vorschlag.", "Der Bau soll in {m} Monaten beginnen.", "Die Bürgermeisterin sprach von einem wichtigen Schritt für die Stadt.", "Kritiker bemängeln die fehlende Beteiligung der Bürger."]  # fmt: skip
FR = ["Le conseil municipal a adopté le budget après un long débat.", "Le coût du projet est estimé à {n} millions d'euros.", "Les habitants s'étaient plaints du bruit pendant des mois.", "La mairie présentera les plans à l'automne.", "Plusieurs élus ont voté contre la proposition.", "Les travaux doivent commencer dans {m} mois.", "Le maire a parlé d'une étape importante pour la ville.", "Les opposants regrettent le manque de concertation."]  # fmt: skip
ES = ["El ayuntamiento aprobó el presupuesto tras un largo debate.", "El coste del proyecto se estima en {n} millones de euros.", "Los vecinos se habían quejado del ruido durante meses.", "El consistorio presentará los planos en otoño.", "Varios concejales votaron en contra de la propuesta.", "Las obras comenzarán dentro de {m} meses.", "La alcaldesa habló de un paso importante para la ciudad.", "Los críticos lamentan la falta de participación ciudadana."]  # fmt: skip
JA = ["市議会は本会議で新しい予算案を可決した。", "総事業費は約{n}億円と見込まれている。", "住民からは騒音への不満が相次いでいた。", "市は秋にも詳しい計画を公表する方針だ。", "一部の会派は反対に回った。", "工事は{m}か月後に始まる予定だ。", "市長は町にとって大きな一歩だと述べた。", "説明が足りないとの声も上がっている。"]  # fmt: skip
ZH = ["市议会在全体会议上通过了新的预算方案。", "项目总投资预计约为{n}亿元。", "此前居民多次反映噪音问题。", "市政府计划在秋季公布详细方案。", "部分代表对该提案投了反对票。", "工程预计将在{m}个月后开工。", "市长表示这是城市发展的重要一步。", "也有市民认为相关说明还不够充分。"]  # fmt: skip
TITLES = {
    "en": ["Council {v} {o}", "Residents react as council {v} {o}", "Board {v} {o}"],
    "de": ["Gemeinderat beschließt neuen Haushalt", "Streit um neue Radwege", "Stadt plant neue Schule"],
    "fr": ["Le conseil adopte le budget", "Polémique autour des pistes cyclables", "La ville prévoit une nouvelle école"],
    "es": ["El ayuntamiento aprueba el presupuesto", "Polémica por los carriles bici", "La ciudad planea una nueva escuela"],
    "ja": ["市議会、新年度予算案を可決", "駅前再開発で住民説明会", "新しい小学校の建設計画"],
    "zh": ["市议会通过新年度预算", "站前改造方案征求意见", "新建小学计划公布"],
}  # fmt: skip
NAV = {
    "en": ["Home", "News", "Local", "Politics", "Business", "Sport", "Opinion", "Weather", "Obituaries", "Subscribe", "Log in"],
    "de": ["Startseite", "Lokales", "Politik", "Wirtschaft", "Sport", "Kultur", "Meinung", "Abo", "Anmelden"],
    "fr": ["Accueil", "Actualités", "Politique", "Économie", "Sport", "Culture", "Opinions", "S'abonner", "Connexion"],
    "es": ["Inicio", "Noticias", "Política", "Economía", "Deportes", "Cultura", "Opinión", "Suscríbete"],
    "ja": ["Top", "News", "Politics", "Economy", "Sports", "Culture", "English", "Login", "Subscribe now"],
    "zh": ["Home", "News", "City", "Tech", "Life", "Video", "App", "About us", "Contact"],
}  # fmt: skip
MONTHS = {
    "en": ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"],
    "de": ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"],
    "fr": ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"],
    "es": ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"],
}  # fmt: skip
ZONE_NAMES = {(-300, False): "EST", (-300, True): "EDT", (-480, False): "PST", (-480, True): "PDT", (-360, False): "CST", (-360, True): "CDT", (0, False): "GMT", (0, True): "BST"}  # fmt: skip
PUBLISHED_WORD = {"en": "Published", "de": "Veröffentlicht:", "fr": "Publié le", "es": "Publicado el", "ja": "公開", "zh": "发布时间："}  # fmt: skip
UPDATED_WORD = {"en": "Updated", "de": "Aktualisiert:", "fr": "Mis à jour le", "es": "Actualizado el", "ja": "更新", "zh": "更新时间："}  # fmt: skip


def base_lang(site: Site) -> str:
    return (site.lang or "en").split("-")[0]


def local_offset(site: Site, day: dt.date) -> int:
    return site.offset + (60 if site.dst and 4 <= day.month <= 10 else 0)


def iso(t: dt.datetime, style: str) -> str:
    """A local aware datetime as the CMS writes it."""
    if style == "utc":
        return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if style == "naive":
        return t.strftime("%Y-%m-%dT%H:%M:%S")
    return t.isoformat()


def visible(t: dt.datetime, site: Site, rng: random.Random, *, with_time: bool = True) -> str:
    """The date as the site prints it for readers, in its language and order."""
    lang, d = base_lang(site), t.date()
    hm = t.strftime("%H:%M")
    if lang == "ja" or (lang == "zh" and rng.random() < 0.5):
        return f"{d.year}年{d.month}月{d.day}日" + (f" {hm}" if with_time else "")
    if lang == "zh":
        return d.isoformat() + (f" {hm}" if with_time else "")
    months = MONTHS[lang]
    if lang == "en" and site.lang != "en-GB":
        style = rng.random()
        if style < 0.45:
            s = f"{months[d.month - 1]} {d.day}, {d.year}"
        elif style < 0.75:
            s = f"{months[d.month - 1][:3]}. {d.day}, {d.year}"
        else:
            s = f"{d.month:02d}/{d.day:02d}/{d.year}"
        if with_time and rng.random() < 0.5:
            zone = ZONE_NAMES.get((site.offset, local_offset(site, d) != site.offset), "")
            s += " " + t.strftime("%I:%M %p").lstrip("0") + (f" {zone}" if zone else "")
        return s
    if lang == "de":
        return (
            f"{d.day}. {months[d.month - 1]} {d.year}"
            if rng.random() < 0.5
            else d.strftime("%d.%m.%Y") + (f", {hm} Uhr" if with_time else "")
        )
    if lang == "fr":
        return (
            f"{d.day} {months[d.month - 1]} {d.year}"
            if rng.random() < 0.6
            else d.strftime("%d/%m/%Y") + (f" à {hm.replace(':', 'h')}" if with_time else "")
        )
    if lang == "es":
        return (
            f"{d.day} de {months[d.month - 1]} de {d.year}"
            if rng.random() < 0.6
            else d.strftime("%d/%m/%Y") + (f" {hm}" if with_time else "")
        )
    return f"{d.day} {months[d.month - 1]} {d.year}" + (f" {hm}" if with_time else "")  # en-GB


def numeric(d: dt.date, site: Site) -> str:
    us = site.lang in ("en-US", "") or (site.lang == "en" and site.offset < 0)
    return f"{d.month:02d}/{d.day:02d}/{d.year}" if us else f"{d.day:02d}/{d.month:02d}/{d.year}"


def paragraphs(site: Site, rng: random.Random, t: dt.datetime, body_dates: bool) -> list[str]:
    lang = base_lang(site)
    pool = {"de": DE, "fr": FR, "es": ES, "ja": JA, "zh": ZH}.get(lang)
    out = []
    for i in range(rng.randint(4, 8)):
        sents = []
        for _ in range(rng.randint(2, 4)):
            if pool is None:
                if rng.random() < 0.5:
                    sents.append(
                        f"{rng.choice(EN_SUBJ)} {rng.choice(EN_VERB)} {rng.choice(EN_OBJ)} {rng.choice(EN_TAIL)}."
                    )
                else:
                    sents.append(rng.choice(EN_MORE))
            else:
                sents.append(rng.choice(pool))
        if body_dates and i == 1:
            past = t.date() - dt.timedelta(days=rng.randint(20, 900))
            if lang in ("ja", "zh"):
                sents.append(
                    f"{past.year}年{past.month}月{past.day}日にも同様の提案があった。"
                    if lang == "ja"
                    else f"{past.year}年{past.month}月{past.day}日曾提出类似方案。"
                )
            elif lang == "en":
                sents.append(
                    f"A similar plan was rejected on {MONTHS['en'][past.month - 1]} {past.day}, {past.year}."
                )
            else:
                sents.append(
                    f"({past.day}.{past.month:02d}.{past.year})"
                    if lang == "de"
                    else f"({past.day} {MONTHS[lang][past.month - 1]} {past.year})"
                )
        sep = "" if lang in ("ja", "zh") else " "
        out.append(sep.join(s.format(n=rng.randint(2, 90), m=rng.randint(2, 36)) for s in sents))
    return out


def title_of(site: Site, rng: random.Random) -> str:
    lang = base_lang(site)
    return rng.choice(TITLES[lang]).format(v=rng.choice(EN_VERB), o=rng.choice(EN_OBJ))


JS_LINES = [
    "window.dataLayer = window.dataLayer || []; function gtag(){{dataLayer.push(arguments);}}",
    'var cfg{i} = {{"slot": "/{i}/news/article", "sizes": [[300, 250], [728, 90]], "lazy": true}};',
    "document.addEventListener('DOMContentLoaded', function () {{ initWidget({i}); }});",
    "(function(w,d,s,l,i){{w[l]=w[l]||[];w[l].push({{'gtm.start': new Date().getTime(),event:'gtm.js'}});}})(window,document,'script','dataLayer','GTM-{i}');",
]
CSS_LINE = (
    ".c{i} {{ margin: {i}px 0; padding: 0 {i}px; font: 400 1rem/1.5 system-ui; color: #333; }}"
)


def bulk(site: Site, rng: random.Random) -> tuple[str, str, str, str]:
    """The weight real pages carry around an article: scripts, styles, menus, widgets, ads.

    Sizes are log-normal around those of news pages (median HTML about 60 KB): head scripts and
    styles, a mega menu of 40-300 links, a footer of 30-150 links, "most read" and newsletter
    widgets and ad slots. Returns (head, menu, widgets, footer links).
    """
    lang = base_lang(site)
    n_js = int(min(1500, rng.lognormvariate(5.3, 0.7)))
    js = "\n".join(rng.choice(JS_LINES).format(i=i) for i in range(n_js))
    css = "\n".join(
        CSS_LINE.format(i=i) for i in range(int(min(600, rng.lognormvariate(4.5, 0.8))))
    )
    head = f"<style>{css}</style><script>{js}</script>"
    words = NAV[lang]
    links = int(min(300, rng.lognormvariate(4.3, 0.6)))
    menu = "".join(
        f'<li class="menu-item menu-item-{i}"><a href="/section/{i}">{rng.choice(words)} {i}</a></li>'
        for i in range(links)
    )
    menu = f'<div class="mega-menu"><ul class="menu">{menu}</ul></div>'
    most = "".join(
        f'<li class="most-read__item"><a href="/news/m{i}">{html.escape(title_of(site, rng))}</a></li>'
        for i in range(rng.randint(5, 10))
    )
    ads = "".join(
        f'<div class="ad-slot" id="ad-{i}" data-size="300x250"></div>'
        for i in range(rng.randint(3, 10))
    )
    widgets = (
        f'<div class="widget most-read"><h4>Most read</h4><ol>{most}</ol></div>'
        '<div class="widget newsletter"><form action="/subscribe"><input type="email" name="e">'
        "<button>Sign up</button></form></div>" + ads
    )
    foot = "".join(
        f'<a href="/f/{i}" class="footer-link">{rng.choice(words)}</a> '
        for i in range(int(min(150, rng.lognormvariate(3.9, 0.5))))
    )
    return head, menu, widgets, f"<div class='footer-links'>{foot}</div>"


def page(
    site: Site, rng: random.Random, idx: int, *, lean: bool = False
) -> tuple[bytes, dict[str, object]]:
    lang = base_lang(site)
    day = dt.date(2012, 1, 1) + dt.timedelta(days=rng.randint(0, 13 * 365))
    off = local_offset(site, day)
    tz = dt.timezone(dt.timedelta(minutes=off))
    t = dt.datetime.combine(day, dt.time(rng.randint(0, 23), rng.randint(0, 59)), tz)
    crawl = t + dt.timedelta(days=rng.randint(30, 1500))
    noise = {k: rng.random() < p for k, p in NOISE.items()}
    title = title_of(site, rng)
    paras = paragraphs(site, rng, t, noise["body_dates"])
    slug = f"story-{idx}"
    url = f"https://{site.host}/" + (f"{day:%Y/%m/%d}/{slug}/" if site.url_date else f"news/{slug}")
    if site.url_date and noise["url_day_before"]:
        url = f"https://{site.host}/{day - dt.timedelta(days=1):%Y/%m/%d}/{slug}/"
    if site.template == "blogger":
        url = f"https://{site.host}/{day:%Y/%m}/{slug}.html"
    modified = t + dt.timedelta(days=rng.randint(0, 400), hours=rng.randint(0, 12))
    first = t - dt.timedelta(days=rng.choice([1, 2, 3, 7, 30, 365, 1100]))
    jsonld_pub = first if noise["jsonld_first_version"] else t
    meta_pub = t + dt.timedelta(days=rng.randint(1, 60)) if noise["meta_republished"] else t
    undated = noise["undated"]
    structured = not noise["no_structured"] and not undated
    style = site.instants

    head: list[str] = []
    if structured:
        if site.template in ("wordpress", "newscms", "cjk", "xhtml"):
            graph = [{"@type": "WebSite", "name": site.host}]
            art = {
                "@type": "NewsArticle" if site.template != "wordpress" else "Article",
                "headline": title,
                "datePublished": iso(jsonld_pub, style),
            }
            if noise["modified"]:
                art["dateModified"] = iso(modified, style)
            graph.append(art)
            ld = {"@context": "https://schema.org", "@graph": graph}
            head.append(
                f'<script type="application/ld+json">{json.dumps(ld, ensure_ascii=False)}</script>'
            )
        if site.template in ("wordpress", "newscms", "cjk"):
            head.append(
                f'<meta property="article:published_time" content="{iso(meta_pub, style)}">'
            )
            if noise["modified"]:
                head.append(
                    f'<meta property="article:modified_time" content="{iso(modified, style)}">'
                )
        if site.template == "drupal":
            head.append(f'<meta name="dcterms.date" content="{iso(t, style)}">')
        if site.template == "press":
            s = numeric(t.date(), site) + (t.strftime(" %I:%M:%S %p") if rng.random() < 0.5 else "")
            head.append(f'<meta name="date" content="{s}">')
        if site.template == "xhtml":
            head.append(f'<meta name="DC.date" content="{t.date().isoformat()}" />')

    nav = " ".join(
        f'<a href="/{w.lower()}">{html.escape(w)}</a>'
        for w in rng.sample(NAV[lang], k=min(8, len(NAV[lang])))
    )
    top = f'<div class="site-header"><a href="/">{site.host}</a>'
    if noise["masthead_today"] and not undated:
        top += (
            f' <span class="date">{html.escape(visible(crawl, site, rng, with_time=False))}</span>'
        )
    top += f"</div><nav>{nav}</nav>"

    meta_line = paras_tail = ""
    if not undated:
        vis = visible(t, site, rng)
        iso_local = t.isoformat()
        if site.template == "wordpress":
            meta_line = f'<div class="entry-meta"><time class="entry-date published" datetime="{iso(t, style)}">{html.escape(visible(t, site, rng, with_time=False))}</time></div>'
        elif site.template in ("newscms", "cjk"):
            meta_line = f'<p class="byline">{PUBLISHED_WORD[lang]} {html.escape(vis)}</p>'
        elif site.template == "blogger":
            wd = t.strftime("%A")
            meta_line = f'<h2 class="date-header"><span>{wd}, {html.escape(visible(t, site, rng, with_time=False))}</span></h2>'
            paras_tail = f'<div class="post-footer">Posted by admin at <abbr class="published" title="{iso_local}">{t:%I:%M %p}</abbr></div>'
        elif site.template == "drupal":
            meta_line = f'<div class="submitted">Submitted by editor on {t:%a}, {numeric(t.date(), site)} - {t:%H:%M}</div>'
        elif site.template == "press":
            meta_line = f"<p><strong>FOR IMMEDIATE RELEASE</strong> {numeric(t.date(), site)}</p>"
        elif site.template == "static":
            cls = rng.choice(['class="date"', 'class="post-date"', ""])
            meta_line = f"<p {cls}>{PUBLISHED_WORD[lang] if rng.random() < 0.5 else ''} {html.escape(visible(t, site, rng, with_time=False))}</p>"
        elif site.template == "xhtml":
            meta_line = (
                f'<p class="dateline">{html.escape(visible(t, site, rng, with_time=False))}</p>'
            )
    if noise["updated_line"] and not undated:
        meta_line += f'<p class="updated">{UPDATED_WORD[lang]} {html.escape(visible(modified, site, rng, with_time=False))}</p>'

    body = "".join(f"<p>{html.escape(p)}</p>" for p in paras)
    article = f"<article><h1>{html.escape(title)}</h1>{meta_line}{body}"
    if site.template == "blogger" and not undated:
        article += paras_tail
    article += '<div class="share"><a href="#">Facebook</a> <a href="#">Twitter</a> <a href="#">Email</a></div></article>'
    side = ""
    if noise["related"]:
        items = []
        for k in range(rng.randint(3, 6)):
            other = t - dt.timedelta(days=rng.randint(1, 400))
            items.append(
                f'<li><a href="/news/other-{idx}-{k}">{html.escape(title_of(site, rng))}</a> <span class="date">{html.escape(visible(other, site, rng, with_time=False))}</span></li>'
            )
        side = f'<aside class="related"><h3>Related</h3><ul>{"".join(items)}</ul></aside>'
    comments = ""
    if noise["comments"]:
        cs = []
        for _ in range(rng.randint(1, 4)):
            c = t + dt.timedelta(days=rng.randint(0, 20), hours=rng.randint(1, 20))
            cs.append(
                f'<div class="comment"><span class="comment-date">{html.escape(visible(c, site, rng))}</span><p>{html.escape(rng.choice(EN_MORE).format(n=3, m=4))}</p></div>'
            )
        comments = f'<section id="comments"><h3>Comments</h3>{"".join(cs)}</section>'
    footer = f"<footer><p>© {crawl.year} {site.host}. All rights reserved.</p><p>About · Contact · Privacy · Terms</p></footer>"

    if not lean:  # its own generator: the dated content is the same with or without it
        b_head, b_menu, b_widgets, b_foot = bulk(site, random.Random(idx * 7919 + 1))
        head.append(b_head)
        top += b_menu
        side += b_widgets
        footer = footer.replace("</footer>", b_foot + "</footer>")
    lang_attr = f' lang="{site.lang}"' if site.lang and not noise["no_lang"] else ""
    encoding = "utf-16" if noise["utf16"] else site.encoding
    charset = f'<meta charset="{encoding}">' if site.template != "xhtml" else ""
    doc = (
        f"<!DOCTYPE html><html{lang_attr}><head>{charset}<title>{html.escape(title)} | {site.host}</title>"
        f"{''.join(head)}</head><body>{top}<main>{article}{comments}</main>{side}{footer}</body></html>"
    )
    if site.template == "xhtml":
        doc = (
            '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
            '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n'
            + doc.replace("<!DOCTYPE html><html", '<html xmlns="http://www.w3.org/1999/xhtml"', 1)
        )
    headers: dict[str, str] = {
        "content-type": "text/html" + ("; charset=utf-8" if site.template == "xhtml" else "")
    }
    if noise["last_modified_header"]:
        lm = modified if noise["modified"] else crawl
        headers["last-modified"] = lm.astimezone(dt.UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")
    if noise["archive"]:
        snap = t + dt.timedelta(days=rng.randint(0, 800), hours=rng.randint(1, 48))
        url = f"https://web.archive.org/web/{snap.astimezone(dt.UTC):%Y%m%d%H%M%S}/{url}"
    data = (
        b"\xff\xfe" + doc.encode("utf-16-le")
        if encoding == "utf-16"
        else doc.encode(encoding, errors="xmlcharrefreplace")
    )
    traits = [k for k, v in noise.items() if v]
    manifest = {
        "file": f"{idx:04d}.html",
        "class": f"{site.template}/{style}",
        "url": url,
        "headers": headers,
        "date": day.isoformat(),
        "text": "\n".join([title, *paras]),
        "traits": traits,
        "site": site.host,
    }
    return data, manifest


def generate(out: Path, n: int, seed: int, *, lean: bool = False) -> list[dict[str, object]]:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for i in range(n):
        data, m = page(SITES[i % len(SITES)], rng, i, lean=lean)
        (out / str(m["file"])).write_bytes(data)
        manifest.append(m)
    (out / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--n", type=int, default=800)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument(
        "--lean", action="store_true", help="no scripts, styles, menus or widgets (5 KB pages)"
    )
    a = ap.parse_args()
    m = generate(a.out, a.n, a.seed, lean=a.lean)
    print(f"wrote {len(m)} pages to {a.out}")


if __name__ == "__main__":
    main()
