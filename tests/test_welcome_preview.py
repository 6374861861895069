"""The welcome page opens on a recording of a session with the finished harness: a job, a power
cut, a reboot and the job finished. The program is lessons/00-welcome/preview.py (not on the page:
its code would answer lesson 11's questions). This test runs it against lesson 11's reference
harness, exactly as a cell of lesson 11 runs, and holds the page's recording to what it prints."""
from __future__ import annotations

from pathlib import Path

import cellrun
import stages
from builder import course as course_stage, source as source_stage
from builder.project import Project

PROJECT = Project.book()
COURSE = course_stage.load(PROJECT)
PAGE = COURSE.page("00")


def _recording() -> str:
    """The welcome page's first ```text fence."""
    tokens = source_stage.parse(PROJECT, COURSE, PAGE).tokens
    texts = [t.content for t in tokens if t.type == "fence" and t.info.strip() == "text"]
    assert texts, "lessons/00-welcome/page.md has no ```text fence for the recording"
    return texts[0]


def test_the_welcome_recording_is_what_the_preview_prints(tmp_path: Path):
    program = (PROJECT.lessons / PAGE.folder / "preview.py").read_text(encoding="utf-8")
    harness_file = tmp_path / "harness.py"
    harness_file.write_text(stages.load().reference(11), encoding="utf-8")
    lab_dir = Path(stages.__file__).resolve().parent
    result = cellrun.run_cell(program, harness_path=str(harness_file), lab_dir=str(lab_dir),
                              name="preview.py")
    assert result.error is None, f"lessons/00-welcome/preview.py raised:\n{result.output}"
    assert result.output.rstrip("\n") == _recording().rstrip("\n"), (
        "lessons/00-welcome/page.md: the recording is not what preview.py prints against "
        f"lesson 11's reference harness now:\n{result.output}")
