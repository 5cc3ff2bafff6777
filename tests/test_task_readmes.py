"""Every task folder's README in the harness' format (lm-eval's task README template: title,
paper, citation, groups/tags/tasks, checklist), the suite's depth after it, short enough to
read: the rest lives in a DETAILS.md beside it, linked, with every linked section there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.helpers import PAPER_KEYS as PAPERS
from tests.helpers import TASKS_DIR

HARNESS_HEADINGS = [
    "### Paper",
    "### Citation",
    "### Groups, Tags, and Tasks",
    "#### Groups",
    "#### Tags",
    "#### Tasks",
    "### Checklist",
]
MAX_LINES = 200


def headings(text: str) -> list[str]:
    """Markdown headings outside code blocks (a ``# comment`` in a shell block is none)."""
    found, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            found.append(line.rstrip())
    return found


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lstrip("#").strip().lower()).replace(" ", "-")


def folder_tasks(folder: Path) -> set[str]:
    names = set()
    for path in folder.glob("*.yaml"):
        config = yaml.load(path.read_text(), Loader=yaml.BaseLoader)  # `!function` tags stay text
        if isinstance(config, dict) and "task" in config and isinstance(config["task"], str):
            names.add(config["task"])
    return names


@pytest.mark.parametrize("paper", PAPERS)
def test_readme_opens_in_the_harness_format(paper: str) -> None:
    readme = TASKS_DIR / paper / "README.md"
    assert readme.is_file(), f"lm_eval_tasks/{paper}/README.md is missing: write it in the harness' format"
    text = readme.read_text(encoding="utf-8")
    found = headings(text)
    assert found[0].startswith("# "), f"{paper}: the README starts with its title"
    assert found[1 : 1 + len(HARNESS_HEADINGS)] == HARNESS_HEADINGS, f"{paper}: {found[:9]}"
    assert not [h for h in found if h.startswith("## ")], f"{paper}: sections are '###', as in the harness"
    citation = text.split("### Citation", 1)[1].split("\n### ", 1)[0]
    assert "```bibtex" in citation and "@" in citation, f"{paper}: the citation is a BibTeX block"
    tasks_list = text.split("#### Tasks", 1)[1].split("\n### ", 1)[0]
    missing = {task for task in folder_tasks(TASKS_DIR / paper) if f"`{task}`" not in tasks_list}
    # families named by a pattern (rule_5shot_split{1..5}) count for their members
    missing = {task for task in missing if not re.search(re.sub(r"\d+$", "", task) + r"\{", tasks_list)}
    assert missing == set(), f"{paper}: tasks missing from 'Groups, Tags, and Tasks'"


@pytest.mark.parametrize("paper", PAPERS)
def test_readme_is_short_and_its_details_are_linked(paper: str) -> None:
    readme = TASKS_DIR / paper / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"{paper}: {len(lines)} lines; move sections to DETAILS.md"
    details = readme.parent / "DETAILS.md"
    links = re.findall(r"\]\(DETAILS\.md(?:#([\w\-]+))?\)", "\n".join(lines))
    if not details.is_file():
        assert links == [], f"{paper}: the README links a DETAILS.md that does not exist"
        return
    assert links, f"{paper}: DETAILS.md exists but the README does not link it"
    anchors = {anchor(h) for h in headings(details.read_text(encoding="utf-8"))}
    assert {link for link in links if link} <= anchors, f"{paper}: links to missing DETAILS.md sections"


def test_the_format_check_catches_a_readme_in_another_layout() -> None:
    text = "# Title\n\n## Paper\n\n```bash\n# not a heading\n```\n\n### Tasks\n"
    assert headings(text) == ["# Title", "## Paper", "### Tasks"]
    assert headings(text)[1 : 1 + len(HARNESS_HEADINGS)] != HARNESS_HEADINGS
    assert anchor("### The paper's Table 1 (accuracy)") == "the-papers-table-1-accuracy"
