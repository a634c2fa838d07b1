"""Publication dates, main text and speed of ``extract_html``, beside htmldate and trafilatura alone.

Two kinds of page sets:

* ``--pages DIR`` (repeatable): folders with a ``manifest.json`` or ``pages.json`` in the schema
  of tests/pages/pages.json (file, class, url, headers, true date, gold text): hand-written or
  generated pages (``bench/date_pages.py``);
* ``--real DIR``: real pages with a ``truth.json`` (``{url: {"date": "YYYY-MM-DD", "file":
  NAME}}``) and the pages under ``DIR/pages/NAME`` (e.g. the 195 news pages of htmldate's
  MediaCloud 2020 evaluation set); no gold text, no HTTP headers. Default:
  ``$FACTSEEK_DATA/dates_dev`` when no ``--pages`` is given; ``skipped: ...`` when absent.

On every page:

* dates: exact day / too early / too late / no date against the set's stated date, for
  factseek's publication date (``Document.published``), for the date factseek's temporal
  constraint uses under each ``--date-basis`` (``temporal.constraint_date``: the later of
  publication and last stated modification under ``modified``), for htmldate alone
  (``find_date(extensive_search=True)`` with ``original_date=True`` and ``False``), and for an
  older ``extract.py`` when ``--old-extract FILE`` names one; then factseek's guessed
  (low-confidence) dates and how often each was right, and how many of htmldate's estimates
  were set aside as another page's date or no day at all (and why);
* text: mean token F1 against the gold text, factseek vs trafilatura alone (``bare_extraction``
  with the same options factseek uses), on pages that have a gold text;
* speed: time of ``extract_html`` (text + every date source) vs trafilatura's text extraction
  plus htmldate's extensive search, after one untimed pass over every page (dateparser, inside
  htmldate, compiles each locale's patterns on first use), each page then run ``--repeats``
  times in alternating order, best kept; wall and CPU seconds, and their ratio;
* the temporal constraint: for cut-offs 1, 2, 7 and 30 days after the stated date (the page is
  truly before the claim) the share of pages dropped, and for cut-offs 0, 1, 7 and 30 days before
  it (the page was not there, in this form, before the claim) the share kept: the **leak rate**;
  for each date basis and guessed policy, with conflicts only flagged, and for htmldate's dates.

    python bench/bench_dates.py --real path/to/dates_dev [--repeats 2]
    python bench/bench_dates.py --real path/to/dates_dev --repeats 0   # dates and leaks, no timing
    python bench/bench_dates.py --pages tests/pages --pages path/to/generated [--repeats 3]
    python bench/date_pages.py --out path/to/generated --n 800 --seed 13   # the synthetic set
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import logging
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

BEFORE_OFFSETS = (1, 2, 7, 30)  # cut-off = true date + k: the page is before the claim
AFTER_OFFSETS = (0, 1, 7, 30)  # cut-off = true date - k: the page is not before the claim


def load(folder: Path) -> list[dict[str, Any]]:
    for name in ("manifest.json", "pages.json"):
        if (folder / name).exists():
            pages = json.loads((folder / name).read_text(encoding="utf-8"))
            for p in pages:
                p["raw"] = (folder / p["file"]).read_bytes()
                p["set"] = folder.name
            return pages
    raise SystemExit(f"{folder}: no manifest.json or pages.json")


def load_real(folder: Path) -> list[dict[str, Any]]:
    """Real pages: ``truth.json`` (url -> date, file) and ``pages/FILE``."""
    truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    pages = []
    for url, v in sorted(truth.items(), key=lambda kv: kv[1]["file"]):
        pages.append(
            {
                "file": v["file"],
                "class": "real",
                "url": url,
                "headers": {},
                "date": v["date"],
                "text": None,
                "raw": (folder / "pages" / v["file"]).read_bytes(),
                "set": "real",
            }
        )
    return pages


def htmldate_alone(p: dict[str, Any], original: bool) -> dt.date | None:
    import htmldate

    try:
        d = htmldate.find_date(
            p["raw"], url=p["url"], extensive_search=True, original_date=original
        )
    except Exception:  # htmldate raises on some inputs; that is "no date"
        d = None
    return dt.date.fromisoformat(d) if d else None


def peer(p: dict[str, Any]) -> tuple[str, dt.date | None]:
    """trafilatura's text and htmldate's date alone (the timed peer)."""
    import trafilatura

    r = trafilatura.bare_extraction(
        p["raw"], url=p["url"], include_comments=False, include_tables=True
    )
    text = (r.text or "") if r is not None else ""
    return text, htmldate_alone(p, True)


def ours(p: dict[str, Any]) -> Any:
    """factseek's Document; a page it cannot extract (no text) counts as one with no date."""
    from factseek.errors import ExtractionError
    from factseek.pages.extract import extract_html
    from factseek.types import Document

    try:
        return extract_html(p["raw"], p["url"], headers=p["headers"])
    except ExtractionError as e:
        return Document(url=p["url"], text="", meta={"error": str(e)})


def timed(fn: Any, p: dict[str, Any]) -> tuple[Any, float, float]:
    t, c = time.perf_counter(), time.process_time()
    out = fn(p)
    return out, time.perf_counter() - t, time.process_time() - c


#: Temporal policies compared: (name, TemporalConfig fields) for factseek, or an htmldate date.
FACTSEEK_POLICIES: dict[str, dict[str, str]] = {
    "factseek (defaults: basis modified, guessed flag)": {},
    "factseek, basis published (the paper)": {"date_basis": "published"},
    "factseek, basis modified, guessed drop": {"guessed": "drop"},
    "factseek, basis published, guessed drop": {"date_basis": "published", "guessed": "drop"},
    "factseek, conflicts only flagged": {"on_conflict": "flag"},
}
HTMLDATE_POLICIES = {
    "htmldate alone, original_date=True": "htmldate",
    "htmldate alone, original_date=False": "htmldate_last",
}


def kept(policy: str, p: dict[str, Any], cut: dt.date) -> bool:
    from factseek.constraints.hits import Constraints
    from factseek.constraints.temporal import TemporalConfig, post_fetch_check
    from factseek.types import Hit

    if policy in HTMLDATE_POLICIES:
        d = p[HTMLDATE_POLICIES[policy]]
        return d is not None and d < cut
    if policy == "old":
        return p["old"] is not None and p["old"] < cut
    conf = TemporalConfig(**FACTSEEK_POLICIES[policy])  # type: ignore[arg-type]
    return post_fetch_check(Hit(url=p["url"]), p["doc"], Constraints(before=cut), config=conf)[
        0
    ].kept


def _true(p: dict[str, Any]) -> dt.date:
    return dt.date.fromisoformat(p["date"])


def date_table(
    pages: list[dict[str, Any]], methods: dict[str, Callable[[dict[str, Any]], Any]]
) -> dict[str, Any]:
    from factseek.metrics.extraction import OUTCOMES, date_outcome, outcome_rates

    out: dict[str, Any] = {}
    print(f"{'dates':44} {'exact':>7} {'early':>7} {'late':>7} {'none':>7}")
    for set_name in [*sorted({p["set"] for p in pages}), "all"]:
        group = [p for p in pages if set_name in ("all", p["set"])]
        for m, get in methods.items():
            rates = outcome_rates(date_outcome(get(p), _true(p)) for p in group)
            out[f"{set_name}/{m}"] = rates
            cells = " ".join(f"{rates[o]:7.3f}" for o in OUTCOMES)
            print(f"{(set_name + ': ' + m)[:44]:44} {cells}")
    return out


def guessed_table(pages: list[dict[str, Any]]) -> dict[str, Any]:
    """factseek's low-confidence dates: how many, from which source, and how often right."""
    from factseek.metrics.extraction import date_outcome

    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for p in pages:
        doc = p["doc"]
        if doc.meta.get("date_confidence") == "low":
            source = doc.meta.get("date_source", "")
            kind = "text outside the article" if source == "text" else source
            rows[kind][date_outcome(doc.published, _true(p))] += 1
    n = sum(sum(c.values()) for c in rows.values())
    print(f"\nguessed (low-confidence) publication dates: {n} of {len(pages)} pages")
    for kind, c in sorted(rows.items()):
        print(f"  {kind:28} n={sum(c.values()):3}  " + ", ".join(f"{k} {v}" for k, v in c.items()))
    out: dict[str, Any] = {k: dict(c) for k, c in rows.items()}
    # htmldate's estimates set aside as another page's date or no day (pagedates rules G1-G3)
    aside = Counter(
        p["doc"].meta["date_set_aside"].partition(": ")[2][:60]
        for p in pages
        if p["doc"].meta.get("date_set_aside")
    )
    print(f"htmldate's estimate set aside (another page's date, no day): {sum(aside.values())}")
    for why, n in aside.most_common():
        print(f"  {n:3}  {why}")
    out["set aside"] = dict(aside)
    return out


def zone_table(pages: list[dict[str, Any]], zones: list[str]) -> dict[str, Any]:
    """Which calendar day the set's dates are, on pages whose publication date is a stated
    instant (a time with an offset or in UTC): the day factseek reads (the page's own zone,
    ``pagedates`` rules T1-T4), the UTC day, or the day in each of ``zones``."""
    from zoneinfo import ZoneInfo

    from factseek.pages.dates import read_date

    names = ["factseek's day (the page's zone)", "UTC day", *(f"day in {z}" for z in zones)]
    hits: Counter[str] = Counter()
    n = 0
    for p in pages:
        doc = p["doc"]
        source = doc.meta.get("date_source", "")
        ev = next((e for e in doc.date_evidence if e.source == source), None)
        r = read_date(ev.raw) if ev is not None else None
        if r is None or r.time is None or r.offset is None:
            continue
        at = dt.datetime.combine(r.date, r.time, tzinfo=dt.timezone(r.offset))
        days = [doc.published, at.astimezone(dt.UTC).date()]
        days += [at.astimezone(ZoneInfo(z)).date() for z in zones]
        n += 1
        hits.update(name for name, d in zip(names, days, strict=True) if d == _true(p))
    print(f"\nthe set's date on the {n} pages whose publication date is a stated instant")
    for name in names:
        print(f"  equals {name:40} {hits[name]:4} ({hits[name] / max(n, 1):.3f})")
    return {"pages": n, **{name: hits[name] for name in names}}


def temporal_table(pages: list[dict[str, Any]], policies: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    print("\ntemporal constraint (undated: drop); leaks at cut-offs 0/1/7/30 days before the date")
    print(f"  {'policy':52} {'dropped':>8} {'leaks':>7}   by cut-off")
    for pol in policies:
        drops = [
            not kept(pol, p, _true(p) + dt.timedelta(days=k)) for p in pages for k in BEFORE_OFFSETS
        ]
        by_k = {
            k: statistics.mean(kept(pol, p, _true(p) - dt.timedelta(days=k)) for p in pages)
            for k in AFTER_OFFSETS
        }
        leaks = statistics.mean(by_k.values())
        out[pol] = {
            "dropped_before": statistics.mean(drops),
            "kept_after": leaks,
            "kept_after_by_days": by_k,
        }
        ks = " ".join(f"{v:.3f}" for v in by_k.values())
        print(f"  {pol[:52]:52} {statistics.mean(drops):8.3f} {leaks:7.3f}   {ks}")
    return out


def speed(wall: dict[str, float], cpu: dict[str, float], repeats: int, n: int) -> dict[str, float]:
    ratio, cpu_ratio = wall["ours"] / wall["peer"], cpu["ours"] / cpu["peer"]
    print(
        f"\ntime, best of {repeats}: factseek extract_html {wall['ours']:.2f} s wall, "
        f"{cpu['ours']:.2f} s CPU ({1000 * cpu['ours'] / n:.1f} CPU ms/page); "
        f"trafilatura + htmldate {wall['peer']:.2f} s wall, {cpu['peer']:.2f} s CPU "
        f"({1000 * cpu['peer'] / n:.1f} CPU ms/page); ratio {ratio:.2f} wall, {cpu_ratio:.2f} CPU"
    )
    return {
        "factseek_s": wall["ours"],
        "peer_s": wall["peer"],
        "ratio": ratio,
        "factseek_cpu_s": cpu["ours"],
        "peer_cpu_s": cpu["peer"],
        "cpu_ratio": cpu_ratio,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=Path, action="append", default=[])
    ap.add_argument("--real", type=Path, action="append", default=[])
    ap.add_argument(
        "--repeats", type=int, default=3, help="timed passes per page (0: dates only, no speed)"
    )
    ap.add_argument("--old-extract", type=Path, help="an older factseek extract.py to compare")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument(
        "--zones",
        default="America/New_York",
        help="time zones (comma-separated) whose calendar day the stated instants are compared in",
    )
    a = ap.parse_args()
    if not a.pages and not a.real:
        default = Path(os.environ.get("FACTSEEK_DATA", "")) / "dates_dev"
        if not os.environ.get("FACTSEEK_DATA") or not (default / "truth.json").exists():
            print("skipped: give --real DIR or --pages DIR (or set FACTSEEK_DATA with dates_dev/)")
            return 0
        a.real = [default]
    for folder in a.real:
        if not (folder / "truth.json").exists():
            print(f"skipped: {folder} has no truth.json")
            return 0
    for name in ("trafilatura", "htmldate", "readability.readability"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    from factseek.constraints.temporal import constraint_date
    from factseek.metrics.extraction import token_prf

    old = None
    if a.old_extract:
        spec = importlib.util.spec_from_file_location("old_extract", a.old_extract)
        assert spec and spec.loader
        old = importlib.util.module_from_spec(spec)
        sys.modules["old_extract"] = old  # dataclasses look their module up there
        spec.loader.exec_module(old)

    pages = [p for folder in a.pages for p in load(folder)]
    pages += [p for folder in a.real for p in load_real(folder)]
    for p in pages:  # warm-up: imports and lazy caches (dateparser compiles a locale on first use)
        p["doc"] = ours(p)
        p["peer_text"], p["htmldate"] = peer(p)
    wall = {"ours": 0.0, "peer": 0.0}
    cpu = {"ours": 0.0, "peer": 0.0}
    for i, p in enumerate(pages):
        best = {"ours": (float("inf"), float("inf")), "peer": (float("inf"), float("inf"))}
        for r in range(a.repeats):
            for fn in (ours, peer) if (i + r) % 2 == 0 else (peer, ours):
                out, w, c = timed(fn, p)
                key = "ours" if fn is ours else "peer"
                if fn is ours:
                    p["doc"] = out
                else:
                    p["peer_text"], p["htmldate"] = out
                best[key] = min(best[key], (w, c))
        for key in wall:
            wall[key] += best[key][0]
            cpu[key] += best[key][1]
        p["htmldate_last"] = htmldate_alone(p, False)
        if old is not None:
            p["old"] = old.extract_html(p["raw"], p["url"], headers=p["headers"]).published

    report: dict[str, Any] = {"pages": len(pages), "sets": Counter(p["set"] for p in pages)}
    dated = [p for p in pages if p["date"]]
    methods: dict[str, Callable[[dict[str, Any]], Any]] = {
        "factseek published": lambda p: p["doc"].published,
        "factseek constraint date, basis modified": lambda p: constraint_date(p["doc"]),
        "htmldate alone, original_date=True": lambda p: p["htmldate"],
        "htmldate alone, original_date=False": lambda p: p["htmldate_last"],
    }
    if old is not None:
        methods["factseek before"] = lambda p: p["old"]
    print(f"{len(pages)} pages ({dict(report['sets'])}); {len(dated)} with a true date\n")
    report["dates"] = date_table(dated, methods)
    # the keys the slow test and older figures read
    for set_name in [*sorted({p["set"] for p in dated}), "all"]:
        report["dates"][f"{set_name}/factseek"] = report["dates"][f"{set_name}/factseek published"]
        report["dates"][f"{set_name}/htmldate alone"] = report["dates"][
            f"{set_name}/htmldate alone, original_date=True"
        ]
    failed = sum("error" in p["doc"].meta for p in pages)
    if failed:
        print(f"\n{failed} page(s) had no text for factseek (no Document): counted as no date")
    report["guessed"] = guessed_table(dated)
    modified = sum(p["doc"].modified is not None for p in dated)
    later = sum(
        (p["doc"].modified or dt.date.min) > (p["doc"].published or dt.date.max) for p in dated
    )
    ignored = sum("ignored" in p["doc"].meta.get("modified_rule", "") for p in dated)
    print(
        f"stated modification dates: {modified} pages; later than the publication date: {later}; "
        f"pages with a modification date ignored (absurd or earlier than published): {ignored}"
    )
    report["modified"] = {"stated": modified, "later": later, "ignored": ignored}
    report["zones"] = zone_table(dated, [z for z in a.zones.split(",") if z])

    with_text = [p for p in pages if p.get("text")]
    if with_text:
        f1_ours = statistics.mean(token_prf(p["doc"].text, p["text"])[2] for p in with_text)
        f1_peer = statistics.mean(token_prf(p["peer_text"], p["text"])[2] for p in with_text)
        report["f1"] = {"factseek": f1_ours, "trafilatura": f1_peer}
        print(
            f"\ntext token F1 (mean over {len(with_text)} pages with a gold text): "
            f"factseek {f1_ours:.4f}, trafilatura alone {f1_peer:.4f}"
        )
    if a.repeats > 0:
        report["speed"] = speed(wall, cpu, a.repeats, len(pages))

    policies = [*FACTSEEK_POLICIES, *HTMLDATE_POLICIES]
    if old is not None:
        policies.append("old")
    report["temporal"] = temporal_table(dated, policies)
    # the keys the slow test and older figures read
    report["temporal"]["factseek"] = report["temporal"][next(iter(FACTSEEK_POLICIES))]
    report["temporal"]["htmldate"] = report["temporal"]["htmldate alone, original_date=True"]
    if a.json:
        a.json.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
