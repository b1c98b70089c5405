"""Every link in README.md and docs/*.md resolves: relative links name files or folders that
exist, `#anchors` are headings of the page they point to, images exist; every repository path
written as code (`pipeline/stages/render/`, `tools/bench.py`) exists; and no page links to a CDN
(the pages are offline: they load nothing from one)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
# where paths written as code are checked: the repository's own top-level folders and files
REPO_ROOTS = ("pipeline/", "tests/", "tools/", "configs/", "data/", "docs/", ".ci/")
REPO_FILES = {"Makefile", "pyproject.toml", "requirements.lock", "LICENSE", "README.md"}
# CDNs a page could load scripts or fonts from; the pages vendor everything instead
CDN_HOSTS = (
    "cdn.plot.ly",
    "cdn.jsdelivr.net",
    "unpkg.com",
    "cdnjs.cloudflare.com",
    "code.jquery.com",
    "fonts.googleapis.com",
    "fonts.gstatic.com",
    "ajax.googleapis.com",
    "stackpath.bootstrapcdn.com",
)


def _prose(text: str) -> str:
    """The text without fenced code blocks (their lines kept blank, so line numbers hold)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text (code marks and link targets dropped) in lower
    case, punctuation removed, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, with GitHub's -1, -2 for repeated ones."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(_prose(page.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _target_problem(page: Path, target: str, root: Path) -> str | None:
    if target.startswith(("http://", "https://")):
        host = target.split("/")[2]
        return f"links to the CDN {host}" if host.endswith(CDN_HOSTS) else None
    if target.startswith("mailto:"):
        return None
    path_part, _, anchor = target.partition("#")
    resolved = (page.parent / path_part).resolve() if path_part else page
    if not resolved.is_relative_to(root.resolve()):
        return f"{target} leaves the repository"
    if not resolved.exists():
        return f"{target}: no such file or folder"
    if anchor:
        if resolved.suffix != ".md":
            return f"{target}: an anchor into a file that is not Markdown"
        if anchor not in anchors(resolved):
            return f"{target}: no heading #{anchor} in {resolved.name}"
    return None


def _code_path_problem(span: str, root: Path) -> str | None:
    """A repository path written as code that does not exist (placeholders and globs skipped)."""
    path = span.strip()
    if not (path.startswith(REPO_ROOTS) or path in REPO_FILES):
        return None
    if any(c in path for c in " <>*{}$"):
        return None
    return None if (root / path).exists() else f"`{path}`: no such file or folder"


def problems(page: Path, root: Path = ROOT) -> list[str]:
    """Every broken link, missing path and CDN link of one Markdown page, as `page:line: why`."""
    text = page.read_text(encoding="utf-8")
    found = []
    for number, line in enumerate(_prose(text).splitlines(), start=1):
        spans = [m.group(2) for m in CODE_SPAN.finditer(line)]
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            problem = _target_problem(page, target, root)
            if problem:
                found.append(f"{page.name}:{number}: {problem}")
        for span in spans:
            problem = _code_path_problem(span, root)
            if problem:
                found.append(f"{page.name}:{number}: {problem}")
    for number, line in enumerate(text.splitlines(), start=1):
        for host in CDN_HOSTS:
            if host in line:
                found.append(f"{page.name}:{number}: names the CDN {host}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_and_path_resolves(page):
    assert problems(page) == []


def test_the_readme_links_into_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {Path(t.partition("#")[0]).name for t in LINK.findall(readme)}
    assert {p.name for p in PAGES[1:]} <= linked


def test_broken_links_anchors_paths_and_cdns_are_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "real.py").write_text("", encoding="utf-8")
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## A `code` heading\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Here\n\n"
        "[fine](other.md#a-code-heading) [fine too](#here) `tools/real.py` "
        "![fine](../tools/)\n"
        "[gone](missing.md) ![gone](images/none.png)\n"
        "[no such heading](other.md#elsewhere) [nor here](#nowhere)\n"
        "`tools/gone.py` [outside](../../x.md)\n"
        "[cdn](https://cdn.plot.ly/plotly-2.min.js) https://unpkg.com/x\n"
        "```\n[in code](not-checked.md) `tools/not-checked.py`\n```\n"
        "`[as code](not-checked.md)`\n",
        encoding="utf-8",
    )
    assert problems(page, root=tmp_path) == [
        "page.md:4: missing.md: no such file or folder",
        "page.md:4: images/none.png: no such file or folder",
        "page.md:5: other.md#elsewhere: no heading #elsewhere in other.md",
        "page.md:5: #nowhere: no heading #nowhere in page.md",
        "page.md:6: ../../x.md leaves the repository",
        "page.md:6: `tools/gone.py`: no such file or folder",
        "page.md:7: links to the CDN cdn.plot.ly",
        "page.md:7: names the CDN cdn.plot.ly",
        "page.md:7: names the CDN unpkg.com",
    ]


def test_slugs_follow_github():
    assert slug("Debian's chromium, the pictures and CI") == "debians-chromium-the-pictures-and-ci"
    assert slug("The map at 100,000 papers and more") == "the-map-at-100000-papers-and-more"
    assert slug("`documents.parquet`") == "documentsparquet"
    assert slug("Beyond one machine: Ray") == "beyond-one-machine-ray"


def test_the_readme_is_a_front_door_with_small_pictures():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for name in ("map.png", "report.png"):
        assert f"](docs/images/{name})" in readme
        data = (ROOT / "docs" / "images" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 400_000, name
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
        assert (width, height) == (1280, 800), name
