"""Every written page of the real book, read through the page model (builder/model.py).

The build itself refuses a page that breaks one of the book's rules (builder/rules.py) and
proves every cell's output; `test_the_book_builds` runs it. The tests here hold each kind of
page to the density of the seed lesson, which the build does not enforce while a page is being
written: a lesson has at least 5 checks, 3 prompts, 7 cells (one editable, shipped with the
wrong guess), 2 figures, its Tau notes, the capability checklist and the closing card; a
checkpoint has at least 5 cases to diagnose, and no labs."""
from __future__ import annotations

from pathlib import Path

import pytest

from builder import course as course_stage, source as source_stage
from builder.pipeline import build
from builder.project import Project

PROJECT = Project.book()
COURSE = course_stage.load(PROJECT)
SOURCES = {page.id: source_stage.parse(PROJECT, COURSE, page) for page in COURSE.written}
LESSONS = [page for page in COURSE.written if page.kind == "lesson"]
CHECKPOINTS = [page for page in COURSE.written if page.kind == "checkpoint"]
CARD = {"hit", "built", "principle", "now", "open"}


def test_the_book_builds(tmp_path: Path):
    """Every rule holds on every page and every cell prints what its page declares."""
    report = build(PROJECT, tmp_path / "site", assets=False, log=lambda line: None)
    assert report.pages == len(COURSE.written)
    assert report.cells == sum(len(s.cells) for s in SOURCES.values())


@pytest.mark.parametrize("page", LESSONS, ids=[p.id for p in LESSONS])
def test_a_lesson_has_the_seeds_density(page):
    parsed = SOURCES[page.id]
    model, where = parsed.model, parsed.rel
    assert len(model.checks) >= 5, f"{where}: {len(model.checks)} checks (at least 5)"
    assert len(model.prompts) >= 3, f"{where}: {len(model.prompts)} prompts (at least 3)"
    assert len(parsed.cells) >= 7, f"{where}: {len(parsed.cells)} cells (at least 7)"
    assert any(cell.editable for cell in parsed.cells), f"{where}: no editable cell"
    assert len(model.figures) >= 2, f"{where}: {len(model.figures)} figures (at least 2)"
    assert model.citations, f"{where}: no Tau note"
    assert model.capabilities, f"{where}: no capability checklist"
    assert model.card == CARD, f"{where}: the closing card lacks {sorted(CARD - model.card)}"
    assert len(model.labs) == len(page.labs)


@pytest.mark.parametrize("page", CHECKPOINTS, ids=[p.id for p in CHECKPOINTS])
def test_a_checkpoint_diagnoses_five_cases_and_adds_no_code(page):
    parsed = SOURCES[page.id]
    assert not page.labs and not parsed.model.labs, f"{parsed.rel}: a checkpoint has no labs"
    assert len(parsed.model.checks) >= 5, f"{parsed.rel}: {len(parsed.model.checks)} checks"
    assert len(parsed.cells) >= 5, f"{parsed.rel}: {len(parsed.cells)} cells to confirm with"


@pytest.mark.parametrize("page", LESSONS, ids=[p.id for p in LESSONS])
def test_the_editable_cell_ships_with_the_wrong_guess(page):
    """The reader fixes it: its declared output is the wrong guess's, and it says so."""
    parsed = SOURCES[page.id]
    for cell in (c for c in parsed.cells if c.editable):
        assert "#" in cell.source, f"{parsed.rel}:{cell.line}: point the reader at the line to fix"


def test_the_course_map_links_every_page_before_the_first_unwritten_one_in_order():
    main = [p for p in COURSE.pages if p.kind != "side-quest"]
    written = [p.written for p in main]
    first_gap = written.index(False) if False in written else len(written)
    assert all(written[:first_gap]), "a page is written after one that is not"
    assert main[0].id == "00" and main[0].written


def test_lesson_01_cells_use_only_what_lesson_01_has():
    """A cell of lesson 01 sees the harness of stage 1.1: nothing from later lessons yet."""
    later = ("text_of", "tool_calls", "tool_specs", "run_tool", "run_agent")
    parsed = SOURCES["01"]
    for cell in parsed.cells:
        used = [name for name in later if f"harness.{name}" in cell.source]
        assert not used, f"{parsed.rel}:{cell.line}: uses {used}, which 1.1's harness lacks"


def test_lesson_11_new_here_leads_to_lesson_01():
    assert "01" in SOURCES["11"].model.links or "(lesson:01)" in SOURCES["11"].meta.get("new_here", "")


# Checkpoint A's `diagnose`: wrong orders and rules a cold reviewer wrote, each of which once scored
# full marks. The answer cell's records must name at least one of them wrongly.
_LOST = ('    if any("but no message calls" in problem for problem in problems):\n'
         '        return "lost reply"\n')
_HANGING = ('    if any("no result for it follows" in problem for problem in problems):\n'
            '        return "interrupted tool"              # a call somewhere was never answered\n')
_SEEDED = '    if first["role"] != "user":\n        return "seeded"\n'
_FAILED = '        return "provider failed"\n'
_RAISED = ('    if last["role"] != "assistant":            # ends on a result or a prompt\n'
           '        return "model call raised"\n')
_SENT_BACK = 'any(\n                m.get("stop_reason") == "error" for m in record[:-1])'
_HIDDEN = ('    if any(m["role"] == "toolResult" and not m["is_error"]\n'
           '           and m["content"].startswith("Error") for m in record):\n')
_ONE_RESULT = ('    results = [m for m in record if m["role"] == "toolResult"]\n'
               '    if results and not results[{0}]["is_error"] and results[{0}]["content"].startswith("Error"):\n')


def _move(block, after):
    """The answer with `block` taken out and put back just after `after`."""
    return lambda s: s.replace(block, "").replace(after, after + block)


DIAGNOSE_WRONG = {
    "lost reply checked after the last message": _move(_LOST, _RAISED),
    "lost reply checked after the A! rules": _move(_LOST, _FAILED),
    "seeded checked after the A! rules": _move(_SEEDED, _FAILED),
    "seeded checked after lost reply": _move(_SEEDED, _LOST),
    "seeded checked after the last message": _move(_SEEDED, _RAISED),
    "interrupted tool checked after the A! rules": _move(_HANGING, _FAILED),
    "a record ending on a result checked before lost reply":
        lambda s: s.replace(_RAISED, "").replace(_LOST, _RAISED + _LOST),
    "interrupted tool only when the last message asks for tools":
        lambda s: s.replace(_HANGING, '    if last["role"] == "assistant" and harness.tool_calls(last):\n'
                                      '        return "interrupted tool"\n'),
    "lost reply only as a result right after the user":
        lambda s: s.replace(_LOST, '    if any(a["role"] == "user" and b["role"] == "toolResult"\n'
                                   '           for a, b in zip(record, record[1:])):\n'
                                   '        return "lost reply"\n'),
    "lost reply only when no message calls anything":
        lambda s: s.replace(_LOST, '    if any(m["role"] == "toolResult" for m in record) and not any(\n'
                                   '            m["role"] == "assistant" and harness.tool_calls(m)\n'
                                   '            for m in record):\n'
                                   '        return "lost reply"\n'),
    "lost reply when a result answers no reply's first call":
        lambda s: s.replace(_LOST, '    if any(m["role"] == "toolResult" and m["tool_call_id"] not in\n'
                                   '           [c["id"] for p in record[:i] if p["role"] == "assistant"\n'
                                   '            for c in harness.tool_calls(p)[:1]]\n'
                                   '           for i, m in enumerate(record)):\n'
                                   '        return "lost reply"\n'),
    # Cold review 10: D1 (the brake, or a failure sent back, named before the whole-list rules),
    # D2 and D3 (a hidden failure looked for in one result only).
    "runaway checked before the whole-list rules":
        lambda s: s.replace(_SEEDED, '    if last.get("stop_reason") == "error" and last["error_message"]'
                                     '.startswith(\n            "Agent stopped after max_turns="):\n'
                                     '        return "runaway"\n' + _SEEDED),
    "failure sent back checked before the whole-list rules":
        lambda s: s.replace(_SEEDED, '    if last.get("stop_reason") == "error" and "400" in last["error_message"]'
                                     ' and any(\n            m.get("stop_reason") == "error" for m in record[:-1]):\n'
                                     '        return "failure sent back"\n' + _SEEDED),
    "hidden failure looked for in the first result only":
        lambda s: s.replace(_HIDDEN, _ONE_RESULT.format(0)),
    "hidden failure looked for in the last result only":
        lambda s: s.replace(_HIDDEN, _ONE_RESULT.format(-1)),
    "failure sent back only when the A! is two back":
        lambda s: s.replace(_SENT_BACK, 'len(record) > 2 and record[-3].get("stop_reason") == "error"'),
}


def test_checkpoint_a_records_catch_the_wrong_orders_of_diagnose():
    from builder import cells
    from builder.labs import Labs
    parsed = SOURCES["A"]
    answer = next(c.source for c in parsed.cells if c.answers and "def diagnose" in c.source)
    total = answer.count('\n    ("')
    sources = [("reference", answer, 10.0)]
    for name, change in DIAGNOSE_WRONG.items():
        wrong = change(answer)
        assert wrong != answer, f"{parsed.rel}: the answer cell changed; update the design {name!r}"
        sources.append((name, wrong, 10.0))
    harness = Labs(PROJECT, COURSE).reference(parsed.page)
    results = cells.run_sources(PROJECT, harness, sources)
    assert f"{total} of {total} right" in results["reference"].output
    for name in DIAGNOSE_WRONG:
        assert "WRONG" in results[name].output, (
            f"{parsed.rel}: the wrong design {name!r} names all {total} records right; add a record "
            "it names wrongly")
