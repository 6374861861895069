"""The welcome page opens on a session with the finished harness: a static program and the text
it printed. A reader cannot run it there (the welcome page has no harness yet), so this test runs
the program against lesson 11's reference harness, exactly as a cell of lesson 11 runs, and holds
the page's text to what it prints now."""
from __future__ import annotations

from pathlib import Path

import cellrun
import stages
from builder import course as course_stage, source as source_stage
from builder.project import Project

PROJECT = Project.book()
COURSE = course_stage.load(PROJECT)


def _preview() -> tuple[str, str]:
    """The welcome page's first python fence and the text fence right after it."""
    tokens = source_stage.parse(PROJECT, COURSE, COURSE.page("00")).tokens
    fences = [t for t in tokens if t.type == "fence"]
    for first, second in zip(fences, fences[1:]):
        if first.info.strip() == "python" and second.info.strip() == "text":
            return first.content, second.content
    raise AssertionError("lessons/00-welcome/page.md has no ```python fence followed by ```text")


def test_the_welcome_preview_prints_what_the_page_says(tmp_path: Path):
    program, shown = _preview()
    harness_file = tmp_path / "harness.py"
    harness_file.write_text(stages.load().reference(11), encoding="utf-8")
    lab_dir = Path(stages.__file__).resolve().parent
    result = cellrun.run_cell(program, harness_path=str(harness_file), lab_dir=str(lab_dir))
    assert result.error is None, f"the welcome preview raised:\n{result.output}"
    assert result.output.rstrip("\n") == shown.rstrip("\n"), (
        "lessons/00-welcome/page.md: the preview's text is not what the program prints against "
        f"lesson 11's reference harness now:\n{result.output}")
