from __future__ import annotations

import datetime as dt

import pytest

from factseek.pages.dates import (
    local_day,
    parse_date,
    post_time,
    reachable_days,
    read_date,
    url_date,
)
from factseek.pages.webarchive import original_url, snapshot

D = dt.date
H = dt.timedelta(hours=1)
TODAY = D(2026, 12, 1)


@pytest.mark.parametrize(
    ("raw", "day", "time", "offset"),
    [
        ("2019-10-18T22:04:00Z", D(2019, 10, 18), "22:04", 0 * H),
        ("2019-10-18T22:04:00.123+02:00", D(2019, 10, 18), "22:04", 2 * H),
        ("2019-10-18 22:04:00 +0200", D(2019, 10, 18), "22:04", 2 * H),
        ("2019-10-18T22:04-05", D(2019, 10, 18), "22:04", -5 * H),
        ("2019-10-18", D(2019, 10, 18), None, None),
        ("2019/10/18", D(2019, 10, 18), None, None),
        ("2019.10.18", D(2019, 10, 18), None, None),
        ("20191018", D(2019, 10, 18), None, None),
        ("20191018T220400Z", D(2019, 10, 18), "22:04", 0 * H),
        ("2019年10月18日 22:04", D(2019, 10, 18), "22:04", None),
        ("2019년 10월 18일", D(2019, 10, 18), None, None),
        ("Oct. 18, 2019 10:04 PM EDT", D(2019, 10, 18), "22:04", -4 * H),
        ("October 18th, 2019", D(2019, 10, 18), None, None),
        ("18 October 2019", D(2019, 10, 18), None, None),
        ("Fri, 18 Oct 2019 22:04:00 GMT", D(2019, 10, 18), "22:04", 0 * H),
        ("18. Oktober 2019 um 22.04 Uhr", D(2019, 10, 18), "22:04", None),
        ("le 18 octobre 2019 à 22h04", D(2019, 10, 18), "22:04", None),
        ("18 de octubre de 2019", D(2019, 10, 18), None, None),
        ("Posted 5 Sept 2020", D(2020, 9, 5), None, None),
        ("Sentence 5 says March 5th, 2020", D(2020, 3, 5), None, None),
    ],
)
def test_read_date_forms(
    raw: str, day: dt.date, time: str | None, offset: dt.timedelta | None
) -> None:
    r = read_date(raw, today=TODAY)
    assert r is not None and r.date == day and not r.ambiguous
    assert (r.time.strftime("%H:%M") if r.time else None) == time
    assert r.offset == offset


@pytest.mark.parametrize(
    "raw", ["", "yesterday", "2020-02-30", "1970-01-01", "3000-01-01", "13/13/2020", "Sentence 5"]
)
def test_read_date_rejects(raw: str) -> None:
    assert read_date(raw, today=TODAY) is None
    assert parse_date(raw, today=TODAY) is None


def test_numeric_order() -> None:
    r = read_date("10/18/2019", today=TODAY)  # 18 is no month
    assert r is not None and r.date == D(2019, 10, 18) and r.order == "mdy" and not r.ambiguous
    r = read_date("18.10.2019", today=TODAY)
    assert r is not None and r.date == D(2019, 10, 18) and r.order == "dmy" and r.separator == "."
    # both readings possible: the later one, with the other kept
    r = read_date("11/01/2023 10:00:00", today=TODAY)
    assert r is not None and r.ambiguous
    assert (r.date, r.other, r.order) == (D(2023, 11, 1), D(2023, 1, 11), "mdy")
    assert r.time == dt.time(10, 0)
    r = read_date("01/11/2023", order="mdy", today=TODAY)
    assert r is not None and r.date == D(2023, 1, 11) and not r.ambiguous
    # impossible values: a reading in the future is no reading
    r = read_date("12/11/2026", today=TODAY)
    assert r is not None and r.date == D(2026, 11, 12) and r.order == "dmy"
    r = read_date("05/05/2020", today=TODAY)
    assert r is not None and r.order == "either" and not r.ambiguous


def test_local_day_and_reach() -> None:
    r = read_date("2019-10-18T22:04:00Z", today=TODAY)
    assert r is not None and r.is_utc
    assert local_day(r, 2 * H) == D(2019, 10, 19)
    assert local_day(r, -5 * H) == D(2019, 10, 18)
    assert reachable_days(r) == (D(2019, 10, 18), D(2019, 10, 19))
    early = read_date("2019-10-18T03:00:00Z", today=TODAY)
    assert early is not None and reachable_days(early) == (D(2019, 10, 17), D(2019, 10, 18))
    local = read_date("2019-10-18T22:04:00+02:00", today=TODAY)
    assert local is not None and not local.is_utc and local_day(local, 9 * H) == D(2019, 10, 18)


@pytest.mark.parametrize(
    ("url", "want"),
    [
        ("https://x.com/2019/07/04/story", D(2019, 7, 4)),
        ("https://x.com/news/2019-07-04-story.html", D(2019, 7, 4)),
        ("https://x.com/a/20190704/story", D(2019, 7, 4)),
        ("https://x.com/2019/07/story", None),
        ("https://x.com/item/12345678901", None),
        ("https://x.com/2019/13/40/story", None),
        ("https://web.archive.org/web/20200110123000/https://x.com/a", None),
    ],
)
def test_url_date(url: str, want: dt.date | None) -> None:
    assert url_date(url, today=TODAY) == want


@pytest.mark.parametrize(
    ("url", "want"),
    [
        # snowflake: (ID >> 22) ms after 2010-11-04T01:42:54.657Z
        ("https://twitter.com/Reuters/status/1281836879789404160/photo/1", "2020-07-11T06:25:02"),
        ("https://x.com/someone/status/1281836879789404160", "2020-07-11T06:25:02"),
        ("https://mobile.twitter.com/a_b/statuses/1281836879789404160?s=20", "2020-07-11T06:25:02"),
        # Bluesky TID: microseconds << 10 in base32-sortable
        ("https://bsky.app/profile/jay.bsky.team/post/3jzfcijpj2z2a", "2023-06-30T15:03:01"),
        ("https://x.com/jack/status/20", None),  # 2006, before snowflakes: a plain counter
        ("https://x.com/a/status/362387865599999", None),  # under a day after the epoch: no
        ("https://example.com/a/status/1281836879789404160", None),  # not a known host
        ("https://twitter.com/Reuters", None),
        ("https://bsky.app/profile/a.b/post/zzzzzzzzzzzzz", None),  # top bit set: not a TID
        ("https://x.com/a/status/2000000000000000000000", None),  # too long
        ("http://[::1", None),  # unparseable URL
    ],
)
def test_post_time(url: str, want: str | None) -> None:
    got = post_time(url, today=TODAY)
    assert (got.strftime("%Y-%m-%dT%H:%M:%S") if got else None) == want
    if got is not None:
        assert got.utcoffset() == dt.timedelta(0)


def test_post_time_in_the_future_is_junk() -> None:
    # a 2023 Bluesky post seen from a clock set to 2020
    assert post_time("https://bsky.app/profile/a.b/post/3jzfcijpj2z2a", today=D(2020, 1, 1)) is None


def test_snapshot() -> None:
    s = snapshot("https://web.archive.org/web/20200110123000/https://www.snopes.com/fact-check/x/")
    assert s is not None and s.original == "https://www.snopes.com/fact-check/x/"
    assert s.taken == dt.datetime(2020, 1, 10, 12, 30, tzinfo=dt.UTC)
    s = snapshot("http://web.archive.org/web/20200110123000id_/example.com/report.pdf?a=1")
    assert s is not None and s.original == "http://example.com/report.pdf?a=1"
    s = snapshot(
        "https://web.archive.org/web/2020/https:/example.com/a"
    )  # partial stamp, folded //
    assert s is not None and s.taken is None and s.original == "https://example.com/a"
    for url in (
        "https://example.com/web/20200110123000/https://x.com",
        "https://web.archive.org/web/*/example.com",
        "not a url",
    ):
        assert snapshot(url) is None and original_url(url) == url
