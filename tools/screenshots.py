"""The README's pictures: screenshots of a built report and map (docs/images/report.png and
map.png), taken from disk by headless Debian chromium through Playwright.

    python tools/screenshots.py --site outputs --out docs/images

`make screenshots` builds the bundled corpus first and runs this. Every request outside the
site's folder is refused (the pages are offline), and the run fails if a page asked for one or
logged an error, so a picture never shows a broken page.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1280, "height": 800}
# the pages' own marks that they have drawn (as the browser tests wait for them)
MAP_READY = "() => document.getElementById('topic-map')?.dataset.ready === 'true'"
REPORT_READY = "() => document.body?.dataset.ready === 'true'"  # its first view's charts
# (page, its ready mark, the picture): each as it opens, what a reader sees first
SHOTS = (("map.html", MAP_READY, "map.png"), ("index.html", REPORT_READY, "report.png"))


def _shoot(browser, page_path: Path, ready: str, out: Path) -> list[str]:
    """Open `page_path` from disk, wait for `ready`, write the viewport to `out`; return the
    problems seen (requests outside the folder, console errors, page errors)."""
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    folder = page_path.parent.as_uri() + "/"
    problems: list[str] = []

    def route(request_route) -> None:
        url = request_route.request.url
        if url.startswith(folder):
            request_route.continue_()
        else:
            problems.append(f"request outside the folder: {url}")
            request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(page_path.as_uri())
    page.wait_for_function(ready, timeout=60_000)
    page.wait_for_timeout(500)  # plotly's transitions settle
    page.screenshot(path=str(out))
    context.close()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, required=True, help="a build's output folder")
    parser.add_argument("--out", type=Path, required=True, help="where the PNGs go")
    args = parser.parse_args(argv)
    missing = [name for name, _, _ in SHOTS if not (args.site / name).is_file()]
    if missing:
        print(
            f"error: {args.site} has no {', '.join(missing)}: run make all first", file=sys.stderr
        )
        return 2
    if not Path(CHROMIUM).exists():
        print(f"error: {CHROMIUM} is missing: apt-get install chromium", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    problems = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        for name, ready, png in SHOTS:
            found = _shoot(browser, (args.site / name).resolve(), ready, args.out / png)
            problems += [f"{name}: {p}" for p in found]
            print(f"screenshots: {args.out / png} ({(args.out / png).stat().st_size:,} bytes)")
        browser.close()
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
