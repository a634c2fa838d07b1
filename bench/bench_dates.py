"""Publication dates, main text and speed of ``extract_html``, beside htmldate and trafilatura alone.

On every page of the given sets (folders with a ``manifest.json`` or ``pages.json`` in the schema
of tests/pages/pages.json: file, class, url, headers, true date, gold text):

* dates: exact day / too early / too late / no date, for factseek (``Document.published``) and
  htmldate alone (``find_date(extensive_search=True, original_date=True)``), and for an older
  ``extract.py`` when ``--old-extract FILE`` names one;
* text: mean token F1 against the gold text, factseek vs trafilatura alone
  (``bare_extraction`` with the same options factseek uses);
* speed: wall time of ``extract_html`` (text + every date source) vs trafilatura's text extraction
  plus htmldate's extensive search, after one untimed pass over every page (dateparser, inside
  htmldate, compiles each locale's patterns on first use), each page then run ``--repeats`` times
  in alternating order, best kept;
* the temporal constraint: for cut-offs 1, 2, 7 and 30 days after the true date (the page is truly
  before the claim) the share of pages dropped, and for cut-offs 0, 1, 7 and 30 days before it
  (truly not before) the share kept (leaked); for factseek's default policy (disagreeing credible
  sources across the cut-off: treated as after it), for factseek with conflicts only flagged,
  and for htmldate's date alone.

    python bench/bench_dates.py --pages tests/pages --pages path/to/generated [--repeats 3]
    python bench/date_pages.py --out path/to/generated --n 800 --seed 13   # the synthetic set
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import logging
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import htmldate
import trafilatura

from factseek.constraints import Constraints
from factseek.extract import extract_html
from factseek.metrics.extraction import OUTCOMES, date_outcome, outcome_rates, token_prf
from factseek.temporal import TemporalConfig, post_fetch_check
from factseek.types import Document, Hit

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


def peer(p: dict[str, Any]) -> tuple[str, dt.date | None]:
    r = trafilatura.bare_extraction(
        p["raw"], url=p["url"], include_comments=False, include_tables=True
    )
    text = (r.text or "") if r is not None else ""
    try:
        d = htmldate.find_date(p["raw"], url=p["url"], extensive_search=True, original_date=True)
    except Exception:  # htmldate raises on some inputs; that is "no date"
        d = None
    return text, dt.date.fromisoformat(d) if d else None


def ours(p: dict[str, Any]) -> Document:
    return extract_html(p["raw"], p["url"], headers=p["headers"])


def timed(fn: Any, p: dict[str, Any]) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn(p)
    return out, time.perf_counter() - t


def kept(policy: str, p: dict[str, Any], cut: dt.date) -> bool:
    c = Constraints(before=cut)
    if policy == "htmldate":
        return p["htmldate"] is not None and p["htmldate"] < cut
    if policy == "old":
        return p["old"] is not None and p["old"] < cut
    conf = TemporalConfig(on_conflict="after" if policy == "factseek" else "flag")
    return post_fetch_check(Hit(url=p["url"]), p["doc"], c, config=conf)[0].kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=Path, action="append", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--old-extract", type=Path, help="an older factseek extract.py to compare")
    ap.add_argument("--json", type=Path, help="write the figures here")
    a = ap.parse_args()
    for name in ("trafilatura", "htmldate", "readability.readability"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    old = None
    if a.old_extract:
        spec = importlib.util.spec_from_file_location("old_extract", a.old_extract)
        assert spec and spec.loader
        old = importlib.util.module_from_spec(spec)
        sys.modules["old_extract"] = old  # dataclasses look their module up there
        spec.loader.exec_module(old)

    pages = [p for folder in a.pages for p in load(folder)]
    for p in pages:  # warm-up: imports and lazy caches (dateparser compiles a locale on first use)
        ours(p), peer(p)
    t_ours, t_peer = 0.0, 0.0
    for i, p in enumerate(pages):
        best_o, best_p = float("inf"), float("inf")
        for r in range(a.repeats):
            for fn in (ours, peer) if (i + r) % 2 == 0 else (peer, ours):
                out, s = timed(fn, p)
                if fn is ours:
                    p["doc"], best_o = out, min(best_o, s)
                else:
                    (p["peer_text"], p["htmldate"]), best_p = out, min(best_p, s)
        t_ours, t_peer = t_ours + best_o, t_peer + best_p
        if old is not None:
            p["old"] = old.extract_html(p["raw"], p["url"], headers=p["headers"]).published

    report: dict[str, Any] = {"pages": len(pages), "sets": Counter(p["set"] for p in pages)}
    dated = [p for p in pages if p["date"]]
    methods = {"factseek": lambda p: p["doc"].published, "htmldate alone": lambda p: p["htmldate"]}
    if old is not None:
        methods["factseek before"] = lambda p: p["old"]
    print(f"{len(pages)} pages ({dict(report['sets'])}); {len(dated)} with a true date\n")
    print(f"{'dates':24} {'exact':>7} {'early':>7} {'late':>7} {'none':>7}")
    report["dates"] = {}
    for set_name in [*sorted({p["set"] for p in dated}), "all"]:
        group = [p for p in dated if set_name in ("all", p["set"])]
        for m, get in methods.items():
            rates = outcome_rates(
                date_outcome(get(p), dt.date.fromisoformat(p["date"])) for p in group
            )
            report["dates"][f"{set_name}/{m}"] = rates
            cells = " ".join(f"{rates[o]:7.3f}" for o in OUTCOMES)
            print(f"{(set_name + ': ' + m)[:24]:24} {cells}")
    print("\nper class, factseek vs htmldate alone (exact day)")
    by_class: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in dated:
        by_class[p["class"]].append(p)
    for cls, group in sorted(by_class.items()):
        ex = [
            date_outcome(g(p), dt.date.fromisoformat(p["date"])) == "exact"
            for p in group
            for g in [methods["factseek"]]
        ]
        eh = [
            date_outcome(p["htmldate"], dt.date.fromisoformat(p["date"])) == "exact" for p in group
        ]
        print(
            f"  {cls:28} n={len(group):4}  factseek {statistics.mean(ex):.3f}  htmldate {statistics.mean(eh):.3f}"
        )

    f1_ours = statistics.mean(token_prf(p["doc"].text, p["text"])[2] for p in pages)
    f1_peer = statistics.mean(token_prf(p["peer_text"], p["text"])[2] for p in pages)
    report["f1"] = {"factseek": f1_ours, "trafilatura": f1_peer}
    print(
        f"\ntext token F1 (mean over pages): factseek {f1_ours:.4f}, trafilatura alone {f1_peer:.4f}"
    )
    ratio = t_ours / t_peer
    report["speed"] = {"factseek_s": t_ours, "peer_s": t_peer, "ratio": ratio}
    print(
        f"time, best of {a.repeats}: factseek extract_html {t_ours:.2f} s "
        f"({1000 * t_ours / len(pages):.1f} ms/page); trafilatura + htmldate {t_peer:.2f} s "
        f"({1000 * t_peer / len(pages):.1f} ms/page); ratio {ratio:.2f}"
    )

    print("\ntemporal constraint (undated: drop)")
    policies = ["factseek", "factseek, conflicts flagged only", "htmldate"]
    if old is not None:
        policies.append("old")
    report["temporal"] = {}
    for pol in policies:
        key = "flag" if pol.startswith("factseek,") else pol
        drops = [
            not kept(key, p, dt.date.fromisoformat(p["date"]) + dt.timedelta(days=k))
            for p in dated
            for k in BEFORE_OFFSETS
        ]
        leaks = [
            kept(key, p, dt.date.fromisoformat(p["date"]) - dt.timedelta(days=k))
            for p in dated
            for k in AFTER_OFFSETS
        ]
        report["temporal"][pol] = {
            "dropped_before": statistics.mean(drops),
            "kept_after": statistics.mean(leaks),
        }
        print(
            f"  {pol:34} truly-before pages dropped {statistics.mean(drops):.3f}   "
            f"not-before pages kept (leaks) {statistics.mean(leaks):.3f}"
        )
    conflict_drops = sum(
        post_fetch_check(
            Hit(url=p["url"]),
            p["doc"],
            Constraints(before=dt.date.fromisoformat(p["date"]) + dt.timedelta(days=k)),
        )[0].reason
        == "date-conflict"
        for p in dated
        for k in BEFORE_OFFSETS
    )
    share = conflict_drops / (len(dated) * len(BEFORE_OFFSETS))
    report["temporal"]["conflict_rule_drops_before"] = share
    print(f"  of which the conflict rule (credible sources across the cut-off) dropped {share:.3f}")
    if a.json:
        a.json.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
