"""Lesson 11 ("Memory that outlives the process") against its two standards: the seed lesson its
author wrote, and Tau at the commit the book pins.

- every cell of lessons/11-memory.md, run the way the build runs it (`build.py run`), prints
  exactly the output the lesson declares;
- every code cell of the seed is in the lesson verbatim, in the seed's order, with the seed's
  output, and the cells the seed marks as editable or lab-bound are marked so;
- every multiple-choice check has the seed's options, in the seed's order, with the seed's right
  one;
- every {tau} citation names a file that exists at the pinned commit, with lines inside it that
  say what the lesson claims they say.

The seed is read from ../shared/seed/ next to the repository (or $BOOK_SEED); Tau from a bare
copy at /work/.mirror/huggingface+tau/repo (or $BOOK_TAU_REPO). Tests that need one of them are
skipped, saying so, when it is absent.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "lessons" / "11-memory.md"
SEED = Path(os.environ.get("BOOK_SEED", ROOT.parent / "shared" / "seed" / "000_cc005abed95c29dd.txt"))
TAU_REPO = Path(os.environ.get("BOOK_TAU_REPO", "/work/.mirror/huggingface+tau/repo"))


# -- reading the lesson source ------------------------------------------------------------------

@dataclass
class Cell:
    line: int            # line of the opening fence in lessons/11-memory.md
    options: str         # what follows "python cell"
    source: str
    output: str | None   # the declared ```output, if any


CELL = re.compile(r"^```python cell(?P<options>[^\n]*)\n(?P<source>.*?)^```\n"
                  r"(?:\n```output\n(?P<output>.*?)^```\n)?", re.S | re.M)


def lesson_text() -> str:
    return LESSON.read_text(encoding="utf-8")


def lesson_cells() -> list[Cell]:
    text = lesson_text()
    return [Cell(line=text.count("\n", 0, m.start()) + 1, options=m["options"].strip(),
                 source=m["source"], output=m["output"]) for m in CELL.finditer(text)]


def directive_blocks(text: str, name: str, colons: int) -> list[str]:
    """The bodies of every `<colons> name` directive, e.g. the `:::: check` blocks."""
    fence = ":" * colons
    pattern = re.compile(rf"^{fence} {name}\b[^\n]*\n(.*?)^{fence}$", re.S | re.M)
    return [m[1] for m in pattern.finditer(text)]


def check_options(body: str) -> list[tuple[str, bool]]:
    """(the option's text, whether it is the right one) for each `::: option` of a check. The
    option's text is its first paragraph, with its line breaks folded into spaces."""
    options = []
    for m in re.finditer(r"^::: option( right)?\n(.*?)^:::$", body, re.S | re.M):
        first = m[2].strip().split("\n\n")[0]
        options.append((" ".join(first.split()), bool(m[1])))
    return options


# -- 1. every cell prints its declared output --------------------------------------------------

CELLS = lesson_cells()


def test_the_lesson_has_cells_and_each_declares_its_output():
    assert len(CELLS) >= 9, f"{LESSON.name}: expected the seed's 8 cells and the crash cell"
    missing = [cell.line for cell in CELLS if cell.output is None]
    assert not missing, f"{LESSON.name}: cells with no ```output fence, at lines {missing}"


@pytest.mark.parametrize("cell", CELLS, ids=[f"line{c.line}" for c in CELLS])
def test_cell_prints_its_declared_output(cell: Cell, tmp_path: Path):
    build = ROOT / "build.py"
    assert build.exists(), "build.py is missing: cells cannot be run the way the build runs them"
    path = tmp_path / "cell.py"
    path.write_text(cell.source, encoding="utf-8")
    done = subprocess.run([sys.executable, str(build), "run", "--lesson", "11", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    where = f"lessons/11-memory.md:{cell.line}"
    assert done.returncode == 0, f"{where}: build.py run failed:\n{done.stderr}"
    assert done.stdout == cell.output, (
        f"{where}: the cell printed\n{done.stdout}\nbut the lesson declares\n{cell.output}")


# -- 2. the seed's cells, verbatim -------------------------------------------------------------

# Each seed cell by its first line, its last line of code, and the last line of its output
# (the output starts at the first line after the code that is not blank), in the seed's order.
SEED_CELLS = [
    ("import harness, lab", "      all(a is b for a, b in zip(view, messages)))",
     "same message objects inside: True"),
    ("import json", "      [path for op, path, _ in disk.writes if path in FILES])",
     "written after the reboot: ['a.py', 'b.py', 'c.py']"),
    ("import json", '      "of", len(lines.splitlines()), "lines")',
     "B: messages you can get back: 3 of 4 lines"),
    ("import json", "print(lab.show(h.messages[-2:]))",
     "assistant -> \"I don't know your name.\""),
    ("import contextlib, io", 'print_frontend(h, log, "Which files have you written?")',
     '  assistant -> "So far I have written: a.py"'),
    ("import harness, lab", '      "in", len(log.entries()), "lines")',
     "the file still holds: U A[c1] in 2 lines"),
    ("import harness, lab",
     '      len(log.entries()), "lines | model calls after the reboot:", len(model.calls))',
     "log == record: True | 13 lines | model calls after the reboot: 3"),
    ("import json", 'print("file untouched:", ws.read_text("session.jsonl") == torn)',
     "file untouched: True"),
]
SEED_OPTIONS = {3: "editable", 6: "lab=2"}     # seed cell index -> how the lesson must mark it


def seed_cells() -> list[tuple[str, str]]:
    if not SEED.exists():
        pytest.skip(f"the seed lesson is not at {SEED} (set BOOK_SEED to its path)")
    lines = SEED.read_text(encoding="utf-8").split("\n")
    cells, cursor = [], 0

    def find(text: str, start: int) -> int:
        for number in range(start, len(lines)):
            if lines[number] == text:
                return number
        raise AssertionError(f"{SEED.name}: no line {text!r} after line {start + 1}")

    for first, code_last, out_last in SEED_CELLS:
        begin = find(first, cursor)
        end = find(code_last, begin)
        out_begin = end + 1
        while lines[out_begin] == "":
            out_begin += 1
        out_end = find(out_last, out_begin)
        cells.append(("\n".join(lines[begin:end + 1]) + "\n",
                      "\n".join(lines[out_begin:out_end + 1]) + "\n"))
        cursor = out_end + 1
    return cells


def test_every_seed_cell_is_in_the_lesson_verbatim_in_order_with_its_output():
    seed = seed_cells()
    sources = [cell.source for cell in CELLS]
    at = -1
    for index, (code, output) in enumerate(seed):
        assert code in sources[at + 1:], (
            f"seed cell {index + 1} (starting {code.splitlines()[0]!r}) is not in the lesson "
            f"verbatim, after the cell at lessons/11-memory.md:{CELLS[at].line if at >= 0 else 0}")
        at = sources.index(code, at + 1)
        cell = CELLS[at]
        assert cell.output == output, (
            f"lessons/11-memory.md:{cell.line}: seed cell {index + 1} declares another output:\n"
            f"{cell.output}\nthe seed's is\n{output}")
        wanted = SEED_OPTIONS.get(index)
        flags = cell.options.split()
        if wanted:
            assert wanted in flags, f"lessons/11-memory.md:{cell.line}: not marked {wanted}"
        assert not ({"editable", "lab=2"} - ({wanted} if wanted else set())) & set(flags), (
            f"lessons/11-memory.md:{cell.line}: marked {cell.options}, the seed does not")


def test_the_crash_exploration_cell_uses_lab_explore_crashes():
    seed = {code for code, _ in seed_cells()}
    new = [cell for cell in CELLS if cell.source not in seed]
    assert len(new) == 1, f"expected one cell the seed does not have, found {len(new)}"
    assert "lab.explore_crashes(" in new[0].source, (
        f"lessons/11-memory.md:{new[0].line}: the new cell does not call lab.explore_crashes")


# -- 3. the checks ----------------------------------------------------------------------------

# The seed's checks in order: each option as the seed words it, and which one is right.
SEED_CHECKS = [
    (["No. It returns copies, so that nothing done to the view can ever reach the record",
      "Yes: a new list, holding the very same message objects",
      "Yes, and the list is the same object too. There was nothing to repair, so there is "
      "nothing to build"], 1),
    (["The two files and a saved session of five messages. It writes only c.py",
      "The two files and no session. It writes all three again",
      "The two files and no session. But the model was there for the first two turns, so it "
      "carries on with c.py"], 1),
    (["Three from each. Only the message being written can be hurt",
      "None from the one document. Three from the lines",
      "None from the document, and that is the better failure: an unreadable file is safer "
      "than a half-right one"], 1),
    (["In every frontend. Add the same line to the JSON loop, and to each loop written after it",
      "Inside run_agent. Wherever it appends to the list, it appends to the log as well",
      "Somewhere new: the harness keeps a list of functions it was handed, and calls each of "
      "them with every event"], 2),
    (["A 400. The log has to be mended first: append a result for c1, then resume",
      "It works. The model is sent a made-up result for c1, and the log keeps its hole",
      "It works only if replay() drops the dangling call. Half a turn is not worth keeping"], 1),
    (["Five: the four good ones and the new one. Only the torn message is gone",
      "Four. The new message is lost as well",
      "None. One bad line and the file is no longer valid JSON"], 1),
]


def test_the_table_of_checks_is_the_seeds():
    """The options above are read from the seed, line for line, so the table cannot drift."""
    if not SEED.exists():
        pytest.skip(f"the seed lesson is not at {SEED} (set BOOK_SEED to its path)")
    seed_lines = set(SEED.read_text(encoding="utf-8").split("\n"))
    for options, _ in SEED_CHECKS:
        for option in options:
            assert option in seed_lines, f"{SEED.name}: no option line {option!r}"


def test_every_check_has_the_seeds_options_and_the_seeds_right_one():
    checks = directive_blocks(lesson_text(), "check", 4)
    assert len(checks) == len(SEED_CHECKS), (
        f"lessons/11-memory.md has {len(checks)} checks, the seed {len(SEED_CHECKS)}")
    for number, (body, (options, right)) in enumerate(zip(checks, SEED_CHECKS), 1):
        found = check_options(body)
        assert [text for text, _ in found] == options, f"check {number}: options differ"
        assert [is_right for _, is_right in found] == [i == right for i in range(len(options))], (
            f"check {number}: the right option should be {options[right]!r}")
        assert "::: explain" in body, f"check {number} has no explain"


def test_every_prompt_has_an_answer():
    prompts = directive_blocks(lesson_text(), "prompt", 4)
    assert len(prompts) == 3, f"expected the beeper, the one line and the reflection; {len(prompts)}"
    for body in prompts:
        assert "::: answer" in body


def test_both_labs_have_three_hints_the_last_nearly_the_code():
    text = lesson_text()
    for lab in (1, 2):
        match = re.search(rf"^::::: lab {lab}\n(.*?)^:::::$", text, re.S | re.M)
        assert match, f"no lab {lab}"
        hints = directive_blocks(match[1], "hints", 4)
        assert len(hints) == 1, f"lab {lab}: one hints block"
        titles = re.findall(r"^::: hint(.*)$", hints[0], re.M)
        assert len(titles) == 3 and titles[-1].strip() == "Nearly the code", (lab, titles)
        assert "::: done" in match[1], f"lab {lab} has no done"


def test_figures_exist_with_title_and_desc():
    for src in re.findall(r"^::: figure src=(\S+)", lesson_text(), re.M):
        svg = (LESSON.parent / src).read_text(encoding="utf-8")
        assert "<title" in svg and "<desc" in svg, src
        assert "@import" not in svg and "url(http" not in svg, f"{src} loads something external"


# -- 4. the Tau citations ---------------------------------------------------------------------

TAU_REF = re.compile(r"\{tau\}`(?P<path>[^`:]+)(?::(?P<first>\d+)(?:-(?P<last>\d+))?)?`")

# What the lesson says each cited range holds: a piece of text that must be inside it.
CLAIMS = {
    "dev-notes/push-based-persistence.md:53": "remains the durable-message boundary",
    "dev-notes/push-based-persistence.md:17-26": "Pressing Esc",
    "dev-notes/push-based-persistence.md:56-62": "message identity",
    "src/tau_agent/harness.py:108-115": "def unsubscribe",
    "src/tau_agent/harness.py:168-173": "_append_interrupted_tool_results()",
    "src/tau_agent/harness.py:190-191": "await self._notify(event)",
    "src/tau_agent/harness.py:192-202": "finally:",
    "src/tau_agent/harness.py:193-202": "suppress(Exception)",
    "src/tau_agent/harness.py:207-211": "for listener in list(self._listeners)",
    "src/tau_coding/session.py:2315-2327": "rather than running in the",
    "src/tau_coding/session.py:2329-2364": "LeafEntry(",
    "src/tau_coding/session.py:2334-2369": "is_retry",
    "src/tau_coding/session.py:2371-2401": "Keyed on message identity",
    "src/tau_coding/session.py:362-389": "storage.read_all()",
    "src/tau_coding/session.py:497-506": "messages=state.messages",
    "src/tau_coding/session.py:474-496": "build_system_prompt(",
    "src/tau_coding/session.py:364-379": "pending_initial_entries = (info, model, thinking)",
    "src/tau_coding/session.py:2446-2463": "_pending_initial_entries",
    "src/tau_agent/session/jsonl.py:24-42": "line_number",
    "src/tau_agent/session/jsonl.py:38-40": "if not line.strip():",
    "src/tau_agent/session/jsonl.py:45-111": "def _migrate_session_entry",
    "src/tau_agent/session/memory.py:68-71": "message_rows.append((entry.id, entry.message))",
    "src/tau_agent/session/storage.py:30-34": 'open("a"',
    "src/tau_agent/session/storage.py:40-42": 'split("\\n")',
    "src/tau_agent/session/entries.py:25-32": "parent_id",
    "src/tau_agent/session/entries.py:15-17": "uuid4().hex",
    "src/tau_agent/session/entries.py:106-117": "SessionEntry",
    "src/tau_agent/loop.py:69-71": "MessageEndEvent(message=message)",
    "src/tau_agent/loop.py:128-140": "messages.append(assistant)",
    "tests/test_agent_harness.py:246-275": "test_cancelled_run_notifies_listeners",
    "tests/test_agent_harness.py:318-322": "after a persist failure killed the previous run",
}


def tau_pin() -> str:
    course = yaml.safe_load((ROOT / "lessons" / "course.yaml").read_text(encoding="utf-8"))
    return course["tau"]["commit"]


def tau_show(path: str) -> str | None:
    done = subprocess.run(["git", "-C", str(TAU_REPO), "show", f"{tau_pin()}:{path}"],
                          capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


CITATIONS = sorted({m[0][len("{tau}`"):-1] for m in TAU_REF.finditer(lesson_text())})


def test_the_lesson_cites_tau_and_every_citation_has_a_claim():
    assert len(CITATIONS) >= 20
    assert set(CITATIONS) <= set(CLAIMS), f"no claim recorded for {set(CITATIONS) - set(CLAIMS)}"


@pytest.mark.parametrize("citation", CITATIONS)
def test_tau_citation_holds_at_the_pinned_commit(citation: str):
    if not (TAU_REPO / "HEAD").exists():
        pytest.skip(f"no copy of Tau at {TAU_REPO} (set BOOK_TAU_REPO)")
    path, _, lines = citation.partition(":")
    text = tau_show(path)
    assert text is not None, f"{citation}: {path} does not exist at {tau_pin()[:7]}"
    if not lines:
        return
    first, _, last = lines.partition("-")
    first, last = int(first), int(last or first)
    length = len(text.splitlines())
    assert 1 <= first <= last <= length, f"{citation}: {path} has {length} lines"
    held = "\n".join(text.splitlines()[first - 1:last])
    assert CLAIMS[citation] in held, f"{citation}: lines {first}-{last} do not hold {CLAIMS[citation]!r}"


# -- 5. the side-by-side shows our harness as it is ------------------------------------------

def test_our_side_of_the_comparison_is_the_course_harness():
    """Every line of "Yours" in the Tau comparison is a line of harness_py/course/harness.py,
    except the one that stands for lesson 9's code."""
    block = directive_blocks(lesson_text(), "side-by-side", 4)
    assert len(block) == 1, "one side-by-side"
    ours = re.search(r"```python\n(.*?)```", block[0], re.S)[1]
    source = {line.strip() for line in
              (ROOT / "harness_py" / "course" / "harness.py").read_text(encoding="utf-8").splitlines()}
    for line in ours.splitlines():
        if line.strip() and not line.endswith("# as in lesson 9"):
            assert line.strip() in source or any(
                s.startswith(line.strip() + "  #") for s in source), (
                f"'Yours' shows {line.strip()!r}, which is not in the course harness")


# -- 6. the way in and out --------------------------------------------------------------------

def test_lesson_11_sits_between_checkpoint_b_and_lesson_12_with_s2_off_the_path():
    sys.path.insert(0, str(ROOT))
    from builder import course as course_stage
    from builder.project import Project

    course = course_stage.load(Project.book())
    ids = lambda pair: tuple(p.id if p else None for p in pair)  # noqa: E731
    assert ids(course.neighbours(course.page("11"))) == ("B", "12")
    assert ids(course.neighbours(course.page("12")))[0] == "11"
    assert ids(course.neighbours(course.page("S2"))) == ("11", "12")
