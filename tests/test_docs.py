"""The handbook holds together: every relative link resolves, pages stay short, every benchmark is indexed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
HISTORY = DOCS / "history"
# Markdown links and images, [text](target) — not inside code spans, which the scan strips first.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.MULTILINE)
PAGE_LIMIT = 300  # lines; a page longer than this is a notebook, and belongs in docs/history/
README_LIMIT = 250


def pages() -> list[Path]:
    """Every Markdown file a reader is sent to: the README, CONTRIBUTING, docs/ and benchmarks/."""
    found = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md")),
             *sorted((ROOT / "benchmarks").rglob("*.md"))]
    return [page for page in found if page.is_file()]


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[^\w\- ]", "", text.lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    # A '#' line inside a code block is no heading.
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    seen: dict[str, int] = {}
    result = set()
    for heading in _HEADING.findall(text):
        slug = anchor(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Each link of ``page`` to a file or heading that is not there, named relative to ``root``."""
    text = _CODE.sub("", page.read_text(encoding="utf-8"))
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: — not a file here
            continue
        path_part, _, fragment = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{page.relative_to(root)}: {target} (no such file)")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{page.relative_to(root)}: {target} (no such heading)")
    return broken


def test_anchor_follows_github() -> None:
    assert anchor("The sentence the answer leans on") == "the-sentence-the-answer-leans-on"
    assert anchor("Thresholds (`benchmarks/verify.py --fit`)") == "thresholds-benchmarksverifypy---fit"
    assert anchor("1. What was measured here") == "1-what-was-measured-here"


def test_every_relative_link_in_the_docs_resolves() -> None:
    checked = pages()
    assert len(checked) > 10, "the scan found too few pages to prove anything"
    broken = [problem for page in checked for problem in broken_links(page)]
    assert not broken, "links that go nowhere:\n" + "\n".join(broken)


def test_the_link_check_catches_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Here\n", encoding="utf-8")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md#here) [bad](c.md) [gone](b.md#there) `[code](x.md)`\n", encoding="utf-8")
    assert broken_links(page, tmp_path) == ["a.md: c.md (no such file)", "a.md: b.md#there (no such heading)"]


def test_no_handbook_page_is_a_notebook() -> None:
    """Outside docs/history/ a page says how things are now, in at most PAGE_LIMIT lines."""
    long_pages = [f"{page.relative_to(ROOT)}: {lines} lines" for page in sorted(DOCS.rglob("*.md"))
                  if HISTORY not in page.parents
                  and (lines := len(page.read_text(encoding="utf-8").splitlines())) > PAGE_LIMIT]
    assert not long_pages, "move the measurement history to docs/history/:\n" + "\n".join(long_pages)
    readme_lines = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert readme_lines <= README_LIMIT, f"README.md is {readme_lines} lines (at most {README_LIMIT})"


BENCHMARKS = ROOT / "benchmarks"
_ROW = re.compile(r"^\| `([\w/.]+)` \| [^|]+ \| ([^|]+) \|", re.MULTILINE)


def benchmark_rows() -> dict[str, str]:
    """Each script named in a row of benchmarks/README.md, with that row's results cell."""
    text = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    return {script: results for script, results in _ROW.findall(text)}


def test_every_benchmark_script_has_a_line_in_the_benchmarks_index() -> None:
    rows = benchmark_rows()
    scripts = [path.name for path in sorted(BENCHMARKS.glob("*.py"))]
    scripts += [f"experiments/{path.name}" for path in sorted((BENCHMARKS / "experiments").iterdir())
                if path.suffix == ".py" or (path.is_dir() and path.name != "__pycache__")]
    scripts = [name + "/" if (BENCHMARKS / name).is_dir() else name for name in scripts]
    assert len(scripts) > 40, "the scan found too few scripts to prove anything"
    missing = [name for name in scripts if name not in rows]
    assert not missing, "add a row to benchmarks/README.md for: " + ", ".join(missing)
    stale = [name for name in rows if not (BENCHMARKS / name).exists()]
    assert not stale, "benchmarks/README.md lists scripts that are gone: " + ", ".join(stale)


def test_every_results_file_the_index_names_is_kept() -> None:
    named = {name for cell in benchmark_rows().values() for name in re.findall(r"`([\w.-]+\.json)`", cell)}
    assert named, "the index names no results file"
    missing = sorted(name for name in named if not (BENCHMARKS / "results" / name).is_file())
    assert not missing, "results files benchmarks/README.md names but benchmarks/results/ lacks: " + ", ".join(missing)


def test_every_figure_in_numbers_has_its_script_and_results_file() -> None:
    """A script docs/numbers.md names exists, and its row in the index names a results file that is kept."""
    numbers = (DOCS / "numbers.md").read_text(encoding="utf-8")
    named = sorted(set(re.findall(r"benchmarks/([\w/]+\.py)", numbers)))
    assert len(named) > 20, "the scan found too few scripts in docs/numbers.md"
    rows = benchmark_rows()
    gone = [name for name in named if not (BENCHMARKS / name).is_file()]
    assert not gone, "docs/numbers.md names scripts that are not there: " + ", ".join(gone)
    without = [name for name in named if not re.search(r"`[\w.-]+\.json`", rows.get(name, ""))]
    assert not without, "figures in docs/numbers.md without a results file: " + ", ".join(without)
