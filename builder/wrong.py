"""A lesson's wrong designs: `lessons/<folder>/wrong.yaml`.

A wrong design is a change a reader might plausibly make to a lab's solution, one the lesson
argues against. Each entry names it, says why it is wrong, which lab it belongs to, and which of
that lab's tests must fail it, and gives the change as either a replacement of one exact piece of
the solution or a snippet appended to it (redefining a function or a class):

    - name: newest only
      lab: 1
      why: Sends only the newest message, so the model cannot see what was said before.
      fails: [test_sends_the_whole_transcript]
      replace: |
        model.complete(SYSTEM, messages, [])
      with: |
        model.complete(SYSTEM, messages[-1:], [])

    - name: counter not re-read
      lab: 1
      why: ...
      fails: [test_two_logs]
      append: |
        class SessionLog(SessionLog):
            ...

`load` reads and checks the file (the build calls it for every written page, so a malformed
entry stops the build at its line); `apply` makes the harness text a test runs. Whether each one
really fails its tests is run by tests/test_wrong_designs.py and by `python build.py wrong`."""
from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from .course import LineLoader, Page
from .errors import BuildError
from .project import Project

KEYS = {"name", "lab", "why", "fails", "replace", "with", "append", "__line__"}


@dataclass(frozen=True)
class WrongDesign:
    name: str
    lab: int
    why: str
    fails: tuple[str, ...]          # test ids, "Lab1.test_x"
    line: int                       # where the entry starts in wrong.yaml
    replace: str = ""
    with_: str = ""
    append: str = ""
    point: str = field(default="")  # "1.1"

    def apply(self, solution: str) -> str:
        """The harness this design stands for: the lab's solution, changed."""
        if self.append:
            return solution.rstrip("\n") + "\n\n\n" + self.append
        return solution.replace(self.replace, self.with_, 1)


def load(project: Project, page: Page, test_ids: set[str] | None = None) -> list[WrongDesign]:
    """The wrong designs of `page`, checked. `test_ids`, when given, are the ids its tests
    define: a design must name tests of its own lab that exist."""
    path = project.wrong_file(page)
    rel = project.rel(path)
    if not path.exists():
        return []
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=LineLoader) or []
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise BuildError(rel, mark.line + 1 if mark else 0, f"not valid YAML: {error}") from None
    if not isinstance(data, list):
        raise BuildError(rel, 1, "wrong.yaml is a list of wrong designs")
    designs, names = [], set()
    for raw in data:
        line = raw.get("__line__", 0) if isinstance(raw, dict) else 0
        if not isinstance(raw, dict):
            raise BuildError(rel, line, "each wrong design is a mapping")

        def fail(message: str) -> None:
            raise BuildError(rel, line, f"wrong design {raw.get('name', '?')!r}: {message}")

        unknown = sorted(set(raw) - KEYS)
        if unknown:
            fail(f"unknown key {unknown[0]!r} (name, lab, why, fails, replace and with, or append)")
        for key in ("name", "lab", "why", "fails"):
            if not raw.get(key):
                fail(f"it needs {key}:")
        if " ".join(str(raw["why"]).split()).upper() in ("TODO", "TBD", "FIXME"):
            fail("why: says nothing yet; say what the change gets wrong, in the lesson's terms")
        name = str(raw["name"])
        if name in names:
            fail("the name is used twice")
        names.add(name)
        lab = raw["lab"]
        if not isinstance(lab, int) or not 1 <= lab <= len(page.labs):
            fail(f"lab: {lab!r} is not a lab of lesson {page.id} (1 to {len(page.labs)})")
        fails = raw["fails"] if isinstance(raw["fails"], list) else [raw["fails"]]
        fails = tuple(f if "." in str(f) else f"Lab{lab}.{f}" for f in map(str, fails))
        for test_id in fails:
            if not test_id.startswith(f"Lab{lab}."):
                fail(f"{test_id} is not a test of lab {lab}")
            if test_ids is not None and test_id not in test_ids:
                fail(f"there is no test {test_id} in {project.rel(project.tests_file(page))}")
        has_replace, has_append = "replace" in raw or "with" in raw, "append" in raw
        if has_replace == has_append:
            fail("give either replace: and with:, or append:")
        if has_replace and not raw.get("replace"):
            fail("replace: is empty")
        designs.append(WrongDesign(
            name=name, lab=lab, why=" ".join(str(raw["why"]).split()), fails=fails, line=line,
            replace=str(raw.get("replace") or ""), with_=str(raw.get("with") or ""),
            append=str(raw.get("append") or ""), point=page.point(lab)))
    return designs


def check_applies(project: Project, page: Page, designs: list[WrongDesign], solution) -> None:
    """Every replace: must be found exactly once in its lab's solution (`solution(point)`)."""
    rel = project.rel(project.wrong_file(page))
    for design in designs:
        if design.replace:
            found = solution(design.point).count(design.replace)
            if found != 1:
                raise BuildError(rel, design.line, f"wrong design {design.name!r}: the text to "
                                 f"replace is found {found} times in the solution of "
                                 f"{design.point} (it must be found once)")


@dataclass
class Verdict:
    """What the lab's tests said of one wrong design."""

    design: WrongDesign
    results: list[dict]             # lab_check.run's dicts, for the design's lab

    @property
    def problems(self) -> list[str]:
        """Why this design does not count as caught: empty when every named test FAILed with a
        message a reader can act on."""
        by_id = {r["id"]: r for r in self.results}
        problems = []
        for test_id in self.design.fails:
            result = by_id.get(test_id)
            if result is None:
                problems.append(f"{test_id} did not run")
            elif result["status"] == "pass":
                problems.append(f"{test_id} passes it")
            elif result["status"] != "fail":
                problems.append(f"{test_id} ended in an error, not a FAIL: "
                                f"{result['message'].splitlines()[0] if result['message'] else ''}")
            elif not result["message"].strip():
                problems.append(f"{test_id} failed without a message")
            elif "AssertionError" in result["message"] or "is not true" in result["message"]:
                problems.append(f"{test_id} failed with a bare assertion: {result['message']!r}")
            elif len(result["message"]) > 2000:
                problems.append(f"{test_id} failed with a {len(result['message'])}-character "
                                f"message; name the first difference instead")
        return problems


TEST_TIMEOUT = 5.0    # seconds a lab test may take on a wrong design before it counts as stuck


def judge(project: Project, page: Page, designs: list[WrongDesign], solution,
          folder) -> list[Verdict]:
    """Run every design through its lab's tests with the reader's runner, lab_check. `folder`
    is a scratch directory for the harness files; `solution(point)` gives a lab's solution."""
    from lab import lab_check      # the runner the reader uses, in the page and at home

    verdicts = []
    tests = project.tests_file(page)
    for number, design in enumerate(designs):
        harness = folder / f"wrong{number}" / "harness.py"
        harness.parent.mkdir(parents=True, exist_ok=True)
        harness.write_text(design.apply(solution(design.point)), encoding="utf-8")
        results = lab_check.run(harness, tests, design.lab, timeout=TEST_TIMEOUT)
        verdicts.append(Verdict(design, results))
    return verdicts
