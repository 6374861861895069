#!/usr/bin/env python3
"""Build the book: `python build.py [--out DIR]`, or run one file as a cell of a lesson:
`python build.py run --lesson N FILE.py`, or run a lesson's wrong designs through its
lab tests: `python build.py wrong --lesson N`, or lock every Tau citation (needs a copy of Tau):
`python build.py cite --tau PATH`. `--root DIR` first builds another book laid out like
this one (the tests' fixture course).

The stages are in builder/ (load, parse, execute, render, write); this file is only the command
line. A bad source stops the build with `lessons/<file>:<line>: <what is wrong>` and exit 1, and
the site that was there before is left as it was."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from builder import cells, course as course_stage, options
from builder.errors import BuildError, ToolError
from builder.labs import Labs
from builder.pipeline import build
from builder.project import Project


def _seconds(text: str) -> float:
    """--timeout, read as a cell's timeout= is: finite, above 0, at most the cell's maximum."""
    try:
        return options.TIMEOUT.read("--timeout", text)
    except options.OptionError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _workers(text: str) -> int:
    """--jobs: a whole number of worker processes, 1 or more."""
    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs={text}: not a whole number of worker processes") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"--jobs={text}: a number of worker processes, 1 or more")
    return jobs


def run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="build.py run", description="Run FILE as a cell of lesson N runs.")
    parser.add_argument("--lesson", required=True, help="11, or a page's id: S2, B")
    parser.add_argument("--timeout", type=_seconds, default=options.DEFAULT_TIMEOUT,
                        help=f"seconds the file may run (default {options.DEFAULT_TIMEOUT:g}, as a cell's)")
    parser.add_argument("file", type=Path)
    return parser


def run_file(project: Project, lesson: str, path: Path, timeout: float) -> int:
    """Run FILE exactly as a cell of lesson N (or page S2, B) runs at build time; print what it
    printed."""
    course = course_stage.load(project)
    page = next((p for p in course.pages if p.kind in ("lesson", "welcome", "closing") and p.id.isdigit()
                 and lesson.isdigit() and int(p.id) == int(lesson)), None) or course.page(lesson)
    if page is None:
        raise BuildError(project.rel(course.path), 0, f"there is no lesson {lesson}")
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        print(f"build.py run: {path}: not UTF-8 text (byte {error.object[error.start]:#04x} at offset "
              f"{error.start}); save it as UTF-8", file=sys.stderr)
        return 1
    harness = Labs(project, course).reference(page)
    try:
        result = cells.run_sources(project, harness, [("run", source, timeout)])
    except TimeoutError:
        print(f"{path}: timed out after {timeout:g} s", file=sys.stderr)
        return 1
    except cells.ProcessDied as error:
        print(f"{path}: ended the Python process it ran in\n{error.args[1]}", file=sys.stderr)
        return 1
    sys.stdout.write(result["run"].output)
    return 1 if result["run"].error else 0


def judge_wrong(project: Project, lesson: str) -> int:
    """Run every wrong design of a lesson through its lab's tests; say which are caught."""
    import tempfile
    from builder import wrong
    from lab import lab_check

    course = course_stage.load(project)
    page = course.page(lesson.zfill(2) if lesson.isdigit() else lesson)
    if page is None:
        raise BuildError(project.rel(course.path), 0, f"there is no lesson {lesson}")
    if not page.labs:
        raise BuildError(project.rel(course.path), page.line, f"lesson {lesson} has no labs")
    ids = {test_id for test_id, _, _ in lab_check.sentences(project.tests_file(page))}
    designs = wrong.load(project, page, ids)
    labs = Labs(project, course)
    wrong.check_applies(project, page, designs, labs.stages.solution)
    with tempfile.TemporaryDirectory() as folder:
        verdicts = wrong.judge(project, page, designs, labs.stages.solution, Path(folder))
    bad = 0
    for verdict in verdicts:
        design = verdict.design
        print(f"{'caught' if not verdict.problems else 'MISSED'}  {design.point} {design.name}")
        for result in verdict.results:
            if result["id"] in design.fails or result["status"] != "pass":
                first = (result["message"] or "").splitlines()[:1]
                print(f"      {result['status'].upper():5} {result['id']}: {first[0] if first else ''}")
        for problem in verdict.problems:
            print(f"      -> {problem}")
        bad += bool(verdict.problems)
    print(f"{len(verdicts) - bad} caught, {bad} missed")
    return 1 if bad else 0


def judge_mutants(project: Project, lessons: list[str], lab: int | None, jobs: int | None) -> int:
    """Make small mutants of the code each lab asks the reader to write, run each through the
    lab's tests, and report the survivors no test kills and mutants.yaml does not explain."""
    from builder import mutants

    course = course_stage.load(project)
    stages = Labs(project, course).stages
    unexplained = 0
    for lesson in lessons:
        page = course.page(lesson.zfill(2) if lesson.isdigit() else lesson)
        if page is None:
            raise BuildError(project.rel(course.path), 0, f"there is no page {lesson} in the course")
        if not page.labs:
            raise BuildError(project.rel(course.path), page.line, f"page {lesson} has no labs")
        if lab is not None and not 1 <= lab <= len(page.labs):
            raise BuildError(project.rel(course.path), page.line, f"page {lesson} has no lab {lab} "
                             f"(it has 1 to {len(page.labs)})")
        equivalents = mutants.load_equivalents(project, page)
        outcomes = mutants.run(project, page, stages, lab, jobs)
        lines, missed = mutants.report(project, page, outcomes, equivalents, lab)
        print("\n".join(lines), flush=True)
        unexplained += missed
    print(f"{unexplained} survivor{'s' if unexplained != 1 else ''} neither killed nor explained")
    return 1 if unexplained else 0


def cite(project: Project, repo: Path) -> int:
    """Read every {tau} citation of every written page at the pinned commit; write the lock."""
    from builder import source as source_stage, tau

    course = course_stage.load(project)
    citations, places = [], {}
    for page in course.written:
        parsed = source_stage.parse(project, course, page)
        for citation in parsed.model.citations:
            citations.append(citation)
            places.setdefault(citation.ref, f"{parsed.rel}:{citation.line}")
    try:
        lock = tau.write(project.lessons, repo, course.tau_commit, citations, places)
    except tau.CiteError as error:
        print(f"build.py cite: {error}", file=sys.stderr)
        return 1
    print(f"{project.rel(tau.lock_path(project.lessons))}: {len(lock.entries)} citations at "
          f"{course.tau_commit[:12]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    project = Project.book()
    if argv[:1] == ["--root"] and len(argv) > 1:        # another book laid out like this one
        project, argv = Project.at(Path(argv[1]).resolve()), argv[2:]
    try:
        if argv[:1] == ["run"]:
            args = run_parser().parse_args(argv[1:])
            if args.file.is_dir():
                print(f"build.py run: {args.file} is a folder; give the file to run", file=sys.stderr)
                return 1
            if not args.file.is_file():
                print(f"build.py run: {args.file}: no such file", file=sys.stderr)
                return 1
            return run_file(project, args.lesson, args.file, args.timeout)
        if argv[:1] == ["cite"]:
            parser = argparse.ArgumentParser(prog="build.py cite",
                                             description="Lock every Tau citation.")
            parser.add_argument("--tau", type=Path, required=True,
                                help="a git repository of Tau holding the pinned commit")
            return cite(project, parser.parse_args(argv[1:]).tau)
        if argv[:1] == ["wrong"]:
            parser = argparse.ArgumentParser(prog="build.py wrong",
                                             description="Run a lesson's wrong designs.")
            parser.add_argument("--lesson", required=True)
            args = parser.parse_args(argv[1:])
            return judge_wrong(project, args.lesson)
        if argv[:1] == ["mutants"]:
            parser = argparse.ArgumentParser(
                prog="build.py mutants",
                description="Mutate the code each lab asks for; report the survivors.")
            which = parser.add_mutually_exclusive_group(required=True)
            which.add_argument("--lesson", help="11, or a page's id: S2, 16")
            which.add_argument("--all", action="store_true", help="every page with labs")
            parser.add_argument("--lab", type=int, help="only this lab of the page (1, 2, ...)")
            parser.add_argument("--jobs", type=_workers, help="worker processes (default: one a core)")
            args = parser.parse_args(argv[1:])
            if args.all:
                course = course_stage.load(project)
                lessons = [page.id for page in course.pages if page.labs]
            else:
                lessons = [args.lesson]
            return judge_mutants(project, lessons, args.lab, args.jobs)
        parser = argparse.ArgumentParser(prog="build.py", description="Build the book.")
        parser.add_argument("--out", type=Path, default=project.root / "_site")
        parser.add_argument("--no-assets", action="store_true",
                            help="leave out Pyodide and the editor bundle (pages still read)")
        args = parser.parse_args(argv)
        build(project, args.out, assets=not args.no_assets)
        return 0
    except BuildError as error:
        print(error, file=sys.stderr)
        return 1
    except ToolError as error:          # npm's files, Node, esbuild: say what to run, no traceback
        print(f"build.py: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
