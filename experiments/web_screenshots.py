"""Screenshots of the web workbench's review flow (PNG) for the docs, from a demo session.

    python experiments/web_screenshots.py --out docs/img

Starts the app on a free loopback port with the demo store and an organisation's name, then with
Debian's Chromium (``--chromium``, default /usr/bin/chromium) saves:

- ``web-check.png``: the check form;
- ``web-unreviewed.png``: the machine's verdict before review (its sentence, judge and cards; no
  ClaimReview offered);
- ``web-set.png``: the verdict box of a verdict the reviewer set after confirming two cards: it
  rests on those two only, and replacing it with the machine's takes a ticked box;
- ``web-correction.png``: two stances corrected on the demo's conflicting question: its answer
  and the verdict recomputed, the machine's beside them (the other questions hidden for the
  picture);
- ``web-review.png``: the whole review page after the reviewer approved the verdict;
- ``web-rerun.png``: a rerun with an added question, the corrections it carried and those that no
  longer apply;
- ``web-history.png``: History with each check's verdict of record, coloured by label, and who
  approved or set it.
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


def check(page, url: str, venue: str = "a mayoral debate") -> str:
    claim = demo_claim()
    page.goto(url)
    page.fill("textarea[name=claim]", claim.text)
    page.fill("input[name=date]", claim.date.isoformat() if claim.date else "")
    page.fill("input[name=speaker]", claim.speaker or "")
    page.fill("input[name=venue]", venue)
    page.click("button.primary")
    page.wait_for_selector("#verdict", timeout=120_000)
    return page.url.split("#")[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="factseek-shots-"))
    settings = WebSettings(
        db=tmp / "h.sqlite",
        store=demo_store(tmp / "store"),
        store_label="demo store",
        user="maria",
        organisation="Caldmere Check Desk",
    )
    claim = demo_claim()
    with LocalServer(settings) as srv, sync_playwright() as p:
        srv.app.state.runner.warm(check_options(settings, {}), claim)
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 820}, device_scale_factor=1)

        # a check left as the machine made it (History shows it unreviewed)
        page.goto(srv.url)
        page.fill("textarea[name=claim]", claim.text)
        page.fill("input[name=date]", claim.date.isoformat() if claim.date else "")
        page.fill("input[name=speaker]", claim.speaker or "")
        page.fill("input[name=venue]", "a mayoral debate")
        page.click(".options > summary")
        page.screenshot(path=str(args.out / "web-check.png"))
        page.click("button.primary")
        page.wait_for_selector("#verdict", timeout=120_000)

        # a check whose verdict the reviewer set themselves, on two cards they confirmed
        check(page, srv.url, "a campaign flyer")
        for _ in range(2):
            card = page.locator(".card:not(.irrelevant):not(:has(.tag.ok))").first
            cid = card.locator(".cid").inner_text()
            card.locator("button[value=relevant]").click()
            page.wait_for_selector(f"#card-{cid} .tag.ok")
        page.click(".override > summary")
        page.select_option("#override-label", "factseek:barely-true")
        page.fill(
            ".override textarea[name=note]",
            "The $31M estimate was made; $62M includes interest through 2041; bills rose 18%.",
        )
        page.click(".override button[type=submit]")
        page.wait_for_selector("#verdict[data-status=set]")
        page.click("#replace-verdict > summary")
        page.locator("#verdict").screenshot(path=str(args.out / "web-set.png"))

        # the main session: before review, a correction, an approval
        url = check(page, srv.url, "KCDM community radio")
        page.set_viewport_size({"width": 1100, "height": 1000})
        page.screenshot(path=str(args.out / "web-unreviewed.png"))
        # the reviewer reads the conflicting question's cards: the letter that explains "40
        # percent is the fixed charge" refutes the claim; the other letter is one anecdote
        refuting = page.locator(".card.s-refutes").first
        card_id = refuting.locator(".cid").inner_text()
        section = page.locator(".qsection", has=page.locator(f"#card-{card_id}"))
        for words, label in (("fixed charge", "refutes"), ("My water bill has gone up", "nei")):
            card = section.locator(".card", has_text=words).first
            if card.count():
                cid = card.locator(".cid").inner_text()
                card.locator("select[name=label]").select_option(label)
                card.locator("form:has(select) button[type=submit]").click()
                page.wait_for_selector(f"#card-{cid}.s-{label}")
                section = page.locator(".qsection", has=page.locator(f"#card-{card_id}"))
        page.goto(url)
        section = page.locator(".qsection", has=page.locator(f"#card-{card_id}"))
        section.evaluate(  # for the picture: only the corrected question below the verdict
            "s => document.querySelectorAll('.qsection').forEach(x => { x.hidden = x !== s })"
        )
        verdict_box = page.locator("#verdict").bounding_box()
        section_box = section.bounding_box()
        assert verdict_box and section_box
        page.screenshot(
            path=str(args.out / "web-correction.png"),
            full_page=True,
            clip={
                "x": 0,
                "y": verdict_box["y"] - 10,
                "width": 1100,
                "height": min(
                    section_box["y"] + section_box["height"] - verdict_box["y"] + 20, 2400
                ),
            },
        )
        page.goto(url)
        page.locator(".card").first.locator("button[value=relevant]").click()  # confirmed
        page.wait_for_selector(".card .tag.ok")
        page.click(".approve button[type=submit]")
        page.wait_for_selector("#verdict[data-status=approved]")
        page.set_viewport_size({"width": 1100, "height": 820})
        page.screenshot(path=str(args.out / "web-review.png"), full_page=True)

        # a rerun with one more question keeps what still applies
        page.click("#edit-questions > summary")
        page.locator(".qinput[aria-label='new question']").fill(
            "Did the Northside water plant open in 2021?"
        )
        page.click("#edit-questions button[type=submit]")
        page.wait_for_url(lambda u: u.split("#")[0] != url, timeout=10_000)
        page.wait_for_selector("#verdict", timeout=120_000)
        page.locator("#carried").screenshot(path=str(args.out / "web-rerun.png"))

        page.goto(srv.url + "/history")
        page.screenshot(path=str(args.out / "web-history.png"))
        browser.close()
    print(f"wrote {', '.join(sorted(p.name for p in args.out.glob('web-*.png')))} in {args.out}")


if __name__ == "__main__":
    main()
