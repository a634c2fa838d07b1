"""Screenshots of the web workbench's main pages (PNG) for the docs, from a demo session.

    python bench/web_screenshots.py --out docs/img

Starts the app on a free loopback port with the demo store, checks the demo claim, marks the
first card irrelevant, overrides the verdict with a note, and saves the check form, the review
page and the history with Debian's Chromium (``--chromium``, default /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from factseek.demo import demo_claim, demo_store
from factseek.web.app import WebSettings, check_options
from factseek.web.server import LocalServer

ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="factseek-shots-"))
    settings = WebSettings(
        db=tmp / "h.sqlite", store=demo_store(tmp / "store"), store_label="demo store", user="maria"
    )
    claim = demo_claim()
    with LocalServer(settings) as srv, sync_playwright() as p:
        srv.app.state.runner.warm(check_options(settings, {}), claim)
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 820}, device_scale_factor=1)
        page.goto(srv.url)
        page.fill("textarea[name=claim]", claim.text)
        page.fill("input[name=date]", claim.date.isoformat() if claim.date else "")
        page.fill("input[name=speaker]", claim.speaker or "")
        page.fill("input[name=venue]", "a campaign debate")
        page.click(".options > summary")
        page.screenshot(path=str(args.out / "web-check.png"))
        page.click("button.primary")
        page.wait_for_selector("#verdict", timeout=120_000)
        page.locator(".card").last.locator("button[value=irrelevant]").click()
        page.wait_for_selector(".card.irrelevant", state="attached")
        page.click(".override > summary")
        page.select_option("#override-label", "politifact:barely-true")
        page.fill(
            ".override textarea[name=note]",
            "The $31M estimate was made; $62M includes interest through 2041; bills rose 18%.",
        )
        page.click(".override button[type=submit]")
        page.wait_for_selector("#verdict.tone-bad")
        page.screenshot(path=str(args.out / "web-review.png"), full_page=True)
        page.goto(srv.url + "/history")
        page.screenshot(path=str(args.out / "web-history.png"))
        browser.close()
    print(f"wrote {', '.join(sorted(p.name for p in args.out.glob('web-*.png')))} in {args.out}")


if __name__ == "__main__":
    main()
