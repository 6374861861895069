"""The course's opening (the welcome page and lessons 01 to 03) against what it promises.

- every cell, run the way the build runs it (`build.py run --lesson N`), prints exactly the
  output its page declares, and every lesson ships at least one editable cell;
- every multiple-choice check has exactly one right option, an explanation for every option and
  an `explain`; every prompt has hints, an answer and common answers; every figure exists and
  carries a <title> and a <desc>;
- the labs of each lesson are the labs course.yaml lists, each is a stage point of the course's
  harness, and each has hints that end in "Nearly the code" and a done paragraph (that each
  point's solution passes its tests and its starting file fails them is tests/test_stages.py's);
- every `lesson:` link resolves to a written page, and lesson 11's "Start at lesson 01" leads
  here;
- every {tau} citation names a file that exists at the pinned commit, with lines inside it that
  hold what the lesson says they hold.

Tau is read from a bare copy at /work/.mirror/huggingface+tau/repo (or $BOOK_TAU_REPO); the
citation tests are skipped, saying so, when it is absent.
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
LESSONS = ROOT / "lessons"
PAGES = {0: "00-welcome.md", 1: "01-conversation.md", 2: "02-tools.md", 3: "03-loop.md"}
TAU_REPO = Path(os.environ.get("BOOK_TAU_REPO", "/work/.mirror/huggingface+tau/repo"))

sys.path.insert(0, str(ROOT / "harness_py"))


def text_of(lesson: int) -> str:
    return (LESSONS / PAGES[lesson]).read_text(encoding="utf-8")


def course() -> dict:
    return yaml.safe_load((LESSONS / "course.yaml").read_text(encoding="utf-8"))


def page_entry(lesson: int) -> dict:
    return next(p for p in course()["pages"] if p["id"] == f"{lesson:02d}")


# -- reading the sources ------------------------------------------------------------------------

@dataclass
class Cell:
    lesson: int
    line: int            # line of the opening fence
    options: str         # what follows "python cell"
    source: str
    output: str | None   # the declared ```output, if any

    @property
    def where(self) -> str:
        return f"lessons/{PAGES[self.lesson]}:{self.line}"


CELL = re.compile(r"^```python cell(?P<options>[^\n]*)\n(?P<source>.*?)^```\n"
                  r"(?:\n```output\n(?P<output>.*?)^```\n)?", re.S | re.M)


def cells_of(lesson: int) -> list[Cell]:
    text = text_of(lesson)
    return [Cell(lesson, text.count("\n", 0, m.start()) + 1, m["options"].strip(), m["source"],
                 m["output"]) for m in CELL.finditer(text)]


def blocks(text: str, name: str, colons: int) -> list[str]:
    """The bodies of every `<colons> name` directive, e.g. the `:::: check` blocks."""
    fence = ":" * colons
    return [m[1] for m in re.finditer(rf"^{fence} {name}\b[^\n]*\n(.*?)^{fence}$", text,
                                      re.S | re.M)]


def options_of(check: str) -> list[tuple[bool, str, str]]:
    """(right?, the option, its explanation) for each `::: option` of a check."""
    found = []
    for m in re.finditer(r"^::: option( right)?\n(.*?)^:::$", check, re.S | re.M):
        first, _, rest = m[2].strip().partition("\n\n")
        found.append((bool(m[1]), " ".join(first.split()), rest.strip()))
    return found


ALL_CELLS = [cell for lesson in PAGES for cell in cells_of(lesson)]


# -- 1. cells -----------------------------------------------------------------------------------

def test_every_cell_declares_its_output():
    missing = [cell.where for cell in ALL_CELLS if cell.output is None]
    assert not missing, f"cells with no ```output fence: {missing}"


@pytest.mark.parametrize("lesson", [1, 2, 3])
def test_every_lesson_has_cells_and_one_to_fix(lesson: int):
    cells = cells_of(lesson)
    assert len(cells) >= 3, f"lessons/{PAGES[lesson]}: only {len(cells)} cells"
    editable = [cell for cell in cells if "editable" in cell.options.split()]
    assert editable, f"lessons/{PAGES[lesson]}: no editable cell"
    for cell in editable:
        assert "# the line to fix" in cell.source, (
            f"{cell.where}: an editable cell ships with a wrong line, marked for the reader")


@pytest.mark.parametrize("cell", ALL_CELLS, ids=[c.where.split("/")[-1] for c in ALL_CELLS])
def test_cell_prints_its_declared_output(cell: Cell, tmp_path: Path):
    build = ROOT / "build.py"
    assert build.exists(), "build.py is missing: cells cannot be run the way the build runs them"
    path = tmp_path / "cell.py"
    path.write_text(cell.source, encoding="utf-8")
    done = subprocess.run([sys.executable, str(build), "run", "--lesson", str(cell.lesson),
                           str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 or "raises" in cell.options.split(), (
        f"{cell.where}: build.py run failed:\n{done.stdout}{done.stderr}")
    assert done.stdout == cell.output, (
        f"{cell.where}: the cell printed\n{done.stdout}\nbut the lesson declares\n{cell.output}")


def test_lesson_01_cells_use_only_what_lesson_01_has():
    """A cell of lesson 01 sees the harness of stage 1.1: nothing from region 2 or 3 yet."""
    later = ("text_of", "tool_calls", "tool_specs", "run_tool", "run_agent")
    for cell in cells_of(1):
        used = [name for name in later if f"harness.{name}" in cell.source]
        assert not used, f"{cell.where}: uses {used}, which lesson 01's harness does not have"


# -- 2. checks, prompts, figures ----------------------------------------------------------------

@pytest.mark.parametrize("lesson", [1, 2, 3])
def test_every_check_has_one_right_option_and_explains_every_option(lesson: int):
    checks = blocks(text_of(lesson), "check", 4)
    assert len(checks) >= 3, f"lessons/{PAGES[lesson]}: {len(checks)} checks"
    for number, body in enumerate(checks, 1):
        where = f"lessons/{PAGES[lesson]}, check {number}"
        question = body.split("::: option")[0].strip()
        assert question.endswith("?") or "?" in question, f"{where}: the question comes first"
        options = options_of(body)
        assert len(options) >= 3, f"{where}: {len(options)} options"
        assert sum(right for right, _, _ in options) == 1, f"{where}: not exactly one right"
        for right, option, why in options:
            assert why, f"{where}: option {option!r} does not explain itself"
        assert "::: explain" in body, f"{where}: no explain"
        assert body.index("::: explain") > body.rindex("::: option"), (
            f"{where}: the explanation comes after the options")


@pytest.mark.parametrize("lesson", [1, 2, 3])
def test_every_prompt_has_hints_an_answer_and_common_answers(lesson: int):
    prompts = blocks(text_of(lesson), "prompt", 4)
    assert prompts, f"lessons/{PAGES[lesson]}: no write-it-yourself prompt"
    for body in prompts:
        assert "::: hint" in body and "::: answer" in body and "::: misses" in body, body[:80]
        misses = blocks(body, "misses", 3)[0]
        assert misses.count("\n- ") + misses.startswith("- ") >= 2, "at least two common answers"


@pytest.mark.parametrize("lesson", [1, 2, 3])
def test_figures_exist_with_title_and_desc(lesson: int):
    figures = re.findall(r"^::: figure src=(\S+)", text_of(lesson), re.M)
    assert figures, f"lessons/{PAGES[lesson]}: no figure"
    for src in figures:
        assert src.startswith(f"figures/{lesson:02d}-"), f"{src}: named for its lesson"
        svg = (LESSONS / src).read_text(encoding="utf-8")
        assert "<title" in svg and "<desc" in svg, src
        assert "@import" not in svg and "url(http" not in svg, f"{src} loads something external"


@pytest.mark.parametrize("lesson", [1, 2, 3])
def test_closing_parts(lesson: int):
    text = text_of(lesson)
    capabilities = blocks(text, "capabilities", 3)
    assert len(capabilities) == 1, f"lessons/{PAGES[lesson]}: one capability checklist"
    items = [line[2:] for line in capabilities[0].splitlines() if line.startswith("- ")]
    wanted = [page_entry(n)["capability"] for n in range(1, lesson + 1)]
    assert items == wanted, f"lessons/{PAGES[lesson]}: the checklist so far is {wanted}"
    card = blocks(text, "card", 4)
    assert len(card) == 1
    for part in ("hit", "built", "principle", "now", "open"):
        assert f"::: {part}" in card[0], f"lessons/{PAGES[lesson]}: the card has no {part}"
    assert "{tau}`" in text, f"lessons/{PAGES[lesson]}: no Tau note"


# -- 3. labs ------------------------------------------------------------------------------------

def lab_sections(lesson: int) -> dict[int, str]:
    return {int(m[1]): m[2] for m in re.finditer(r"^::::: lab (\d+)\n(.*?)^:::::$",
                                                   text_of(lesson), re.S | re.M)}


@pytest.mark.parametrize("lesson", [1, 2, 3])
def test_the_labs_are_the_labs_course_yaml_lists(lesson: int):
    labs = lab_sections(lesson)
    titles = page_entry(lesson).get("labs", [])
    assert sorted(labs) == list(range(1, len(titles) + 1)), (
        f"lessons/{PAGES[lesson]} has labs {sorted(labs)}; course.yaml lists {titles}")
    for number, body in labs.items():
        hints = blocks(body, "hints", 4)
        assert len(hints) == 1, f"lab {lesson}.{number}: one hints block"
        titles_ = re.findall(r"^::: hint(.*)$", hints[0], re.M)
        assert len(titles_) >= 3 and titles_[-1].strip() == "Nearly the code", titles_
        assert "::: done" in body, f"lab {lesson}.{number} has no done"


def stages():
    path = ROOT / "harness_py" / "course" / "harness.py"
    if not path.exists():
        pytest.fail("harness_py/course/harness.py is missing: the labs have no stage points")
    import stages as stages_module
    return stages_module.load(path)


@pytest.mark.parametrize("lesson", [1, 2, 3])
def test_every_lab_is_a_stage_point(lesson: int):
    points = stages().points
    for number in lab_sections(lesson):
        assert f"{lesson}.{number}" in points, f"lab {lesson}.{number} is not a stage point"


# -- 4. links -----------------------------------------------------------------------------------

def test_every_lesson_link_resolves_to_a_written_page():
    written = {p["id"] for p in course()["pages"] if p.get("file")
               and (LESSONS / p["file"]).exists()}
    for lesson in PAGES:
        for target in re.findall(r"\]\(lesson:([^)]+)\)", text_of(lesson)):
            assert target in written, f"lessons/{PAGES[lesson]}: lesson:{target} is not written"


def test_lesson_11_new_here_leads_to_lesson_01():
    eleven = next(p for p in course()["pages"] if p["id"] == "11")
    text = (LESSONS / eleven["file"]).read_text(encoding="utf-8")
    assert "(lesson:01)" in text
    assert page_entry(1)["file"] == PAGES[1] and (LESSONS / PAGES[1]).exists()
    assert page_entry(0)["file"] == PAGES[0]


# -- 5. Tau citations ---------------------------------------------------------------------------

TAU_REF = re.compile(r"\{tau\}`(?P<cite>[^`]+)`")

# What each cited range holds, in the lesson's own claim: a piece of text that must be inside it.
CLAIMS = {
    "src/tau_agent/messages.py:92-95": 'role: Literal["user"]',
    "src/tau_agent/messages.py:119-134": "content: list[AssistantContent]",
    "src/tau_agent/messages.py:45-55": "input: int",
    "src/tau_agent/messages.py:77-83": 'type: Literal["toolCall"]',
    "src/tau_agent/messages.py:156-168": "def tool_calls(self)",
    "src/tau_agent/messages.py:171-179": "tool_call_id: str",
    "src/tau_agent/messages.py:116": '"toolUse"',
    "src/tau_agent/loop.py:119-124": "messages=_provider_context(messages)",
    "src/tau_agent/loop.py:283-292": "tool_call_id=call.id",
    "src/tau_agent/loop.py:91-93": "while has_more_tools or pending:",
    "src/tau_agent/loop.py:139-140": "messages.append(assistant)",
    "src/tau_agent/loop.py:146-163": "for call in calls:",
    "src/tau_agent/loop.py:147-148": "has_more_tools = bool(calls)",
    "src/tau_agent/loop.py:178-194": "repair_tool_history(",
    "src/tau_agent/tools.py:76-105": "execute_fn: ToolExecutor",
    "src/tau_agent/tools.py:88": 'execution_mode: ToolExecutionMode = "parallel"',
    "src/tau_ai/openai_compatible.py:807-814": "_system_message(system)",
    "src/tau_ai/openai_compatible.py:1212-1220": '"parameters": dict(tool.input_schema)',
    "src/tau_ai/fake.py:13-41": "self.calls.append(",
    "src/tau_coding/session.py:474-506": "system=system",
    "src/tau_coding/session.py:2329-2332": "await self._persist_message(event.message)",
    "src/tau_coding/session_stats.py:71-89": "input_tokens += prompt_tokens",
    "src/tau_coding/system_prompt.py:38-70": "def build_system_prompt(",
    "src/tau_agent/tools.py:60-69": "class ToolExecutor(Protocol)",
    "src/tau_agent/tools.py:21-27": "details: JSONValue",
    "src/tau_agent/loop.py:248-255": "await before_tool_call(call)",
    "src/tau_agent/loop.py:260-263": 'f"Tool {call.name} not found"',
    "src/tau_agent/loop.py:307-313": "_error_result(str(exc))",
    "src/tau_coding/tools.py:41-42": "DEFAULT_MAX_OUTPUT_LINES = 2_000",
    "src/tau_agent/loop.py:105-113": "Agent stopped after max_turns",
    "src/tau_agent/loop.py:141-144": 'assistant.stop_reason in {"error", "aborted"}',
    "src/tau_agent/loop.py:165-172": "get_steering_messages()",
}


def tau_pin() -> str:
    return course()["tau"]["commit"]


def citations() -> list[tuple[int, str]]:
    return sorted({(lesson, m["cite"]) for lesson in PAGES for m in TAU_REF.finditer(text_of(lesson))})


def test_every_lesson_cites_tau_and_every_citation_has_a_claim():
    cited = {cite for _, cite in citations()}
    assert {lesson for lesson, _ in citations()} >= {1, 2, 3}
    assert cited <= set(CLAIMS), f"no claim recorded for {sorted(cited - set(CLAIMS))}"


@pytest.mark.parametrize("cite", sorted({cite for _, cite in citations()}))
def test_tau_citation_holds_at_the_pinned_commit(cite: str):
    if not (TAU_REPO / "HEAD").exists():
        pytest.skip(f"no copy of Tau at {TAU_REPO} (set BOOK_TAU_REPO)")
    path, _, lines = cite.partition(":")
    done = subprocess.run(["git", "-C", str(TAU_REPO), "show", f"{tau_pin()}:{path}"],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"{cite}: {path} does not exist at {tau_pin()[:7]}"
    if not lines:
        return
    first, _, last = lines.partition("-")
    first, last = int(first), int(last or first)
    length = len(done.stdout.splitlines())
    assert 1 <= first <= last <= length, f"{cite}: {path} has {length} lines"
    held = "\n".join(done.stdout.splitlines()[first - 1:last])
    assert CLAIMS[cite] in held, f"{cite}: lines {first}-{last} do not hold {CLAIMS[cite]!r}"
