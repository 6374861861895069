"""The whole build, pass by pass: load -> parse -> rules -> execute -> render -> write.

Each stage is its own module; this one only runs them in order and says what each did, so a
build's log reads like the pipeline it is. Every pass is over the whole book (mdBook's shape):
every source is parsed and checked before any cell runs, every page's cells are proven (pages at
once, each in its own Python process) before any page is rendered, and the render pass is then
given finished outputs: nothing is written until every page is rendered."""
from __future__ import annotations

import hashlib
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import cells, code, course as course_stage, glossary as glossary_stage, mutants, names, offline, questions, rules, search, source as source_stage, tau, wrong
from .labs import Labs
from .project import Project
from .render import Renderer
from .write import Content, content_hash, write_site



def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


@dataclass
class Report:
    """What a build made: counts for the log and for the tests."""

    pages: int = 0
    cells: int = 0
    labs: int = 0
    files: int = 0
    seconds: float = 0.0
    manifest: dict = field(default_factory=dict)


def _static(project: Project) -> dict[str, Content]:
    """The stylesheets and scripts, and the Pygments stylesheet, under assets/."""
    files: dict[str, Content] = {"assets/css/code.css": code.code_stylesheet(),
                                 names.JS_MODULE: names.js_module()}
    for folder, target in ((project.site / "css", "assets/css/"), (project.site / "js", "assets/js/")):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                files[target + path.relative_to(folder).as_posix()] = path
    return files


def _manifest_entry(page, source=None, views=None) -> dict:
    return {"id": page.id, "kind": page.kind, "number": page.number, "title": page.title,
            "name": page.named(lesson_word=True),
            "subtitle": page.subtitle, "minutes": page.minutes, "capability": page.capability or None,
            "path": page.path if page.written else None,
            "questions": (len(source.model.checks) + len(source.model.prompts)) if source else 0,
            "cells": [{"id": c.id, "editable": c.editable, "lab": c.lab}
                      for c in (source.cells if source else [])],
            "labs": [{"number": v.number, "title": v.title, "point": v.point,
                      "tests": [{"id": i, "sentence": s} for i, s in v.tests]}
                     for v in (views or {}).values()]}


def _cells_key(parsed, reference: str) -> str:
    """What a page's recorded outputs depend on: its cells as written and the harness they
    import. (The stage props in lab/ are watched too: devserve starts afresh when they change.)"""
    digest = hashlib.sha256(reference.encode("utf-8"))
    for cell in parsed.cells:
        digest.update(repr((cell.id, cell.source, cell.expected, cell.raises, cell.timeout)).encode())
    return digest.hexdigest()


def check_rules(project: Project, course, sources: dict, labs: Labs) -> glossary_stage.Glossary:
    """The book's rules (rules.py) on every written page, its wrong designs and equivalent mutants
    (read and checked; the mutation pass itself is `build.py mutants`), the Tau lock, and the
    glossary (glossary.py: no term used before the page that introduces it), which it returns."""
    cited: dict[str, list[tuple[str, int]]] = {}
    for page_id, parsed in sources.items():
        page = parsed.page
        missing = []
        if page.labs:
            ids = {test_id for test_id, _, _ in labs.sentences(page)}
            designs = wrong.load(project, page, ids)
            wrong.check_applies(project, page, designs, labs.stages.solution)
            mutants.load_equivalents(project, page)     # a malformed mutants.yaml stops here
            missing = [k for k in range(1, len(page.labs) + 1) if k not in {d.lab for d in designs}]
        rules.check(parsed, rules.Around(project.room(page), tuple(missing)))
        for citation in parsed.model.citations:
            cited.setdefault(citation.ref, []).append((parsed.rel, citation.line))
    rules.check_book(sources.values(), project.rel(course.path))
    lock = tau.lock_path(project.lessons)
    tau.check(tau.read(project.lessons, project.rel(lock)), course.tau_commit, cited, project.rel(lock))
    return glossary_stage.collect([sources[page.id] for page in course.written])


def execute_book(project: Project, sources: dict, labs: Labs, *, cache: dict | None = None,
                 log: Callable[[str], None] = print, jobs: int | None = None) -> dict[str, dict[str, str]]:
    """The execute pass: every written page's cells run and checked against what the page
    declares, {page id: {cell id: output}}. Each page's cells run in one Python process of their
    own, so pages run at once, `jobs` at a time (default: the machine's CPUs). A page whose cells
    and harness are unchanged since the last build takes its outputs from `cache` (devserve).
    When several pages fail, the first in reading order is the error raised."""
    outputs: dict[str, dict[str, str]] = {}
    work = []       # (page id, parsed, reference, key) of the pages to run
    for page_id, parsed in sources.items():
        if not parsed.cells:
            outputs[page_id] = {}
            continue
        reference = labs.reference(parsed.page)
        key = _cells_key(parsed, reference)
        if cache is not None and cache.get(page_id, (None,))[0] == key:
            outputs[page_id] = cache[page_id][1]
        else:
            work.append((page_id, parsed, reference, key))

    def run(item):
        page_id, parsed, reference, key = item
        clock = time.monotonic()
        recorded = cells.execute(project, parsed.rel, reference, parsed.cells)
        return {cell_id: r.output for cell_id, r in recorded.items()}, time.monotonic() - clock

    workers = max(1, min(jobs or os.cpu_count() or 1, len(work) or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run, item) for item in work]
        results = []
        for future in futures:          # in reading order: the first failing page is raised
            try:
                results.append(future.result())
            except BaseException:
                for other in futures:
                    other.cancel()
                raise
    for (page_id, parsed, _, key), (found, seconds) in zip(work, results):
        outputs[page_id] = found
        if cache is not None:
            cache[page_id] = (key, found)
        log(f"execute  {parsed.rel}: {_count(len(parsed.cells), 'cell')} proven in {seconds:.1f} s")
    return outputs


def build(project: Project, out: Path, *, assets: bool = True,
          log: Callable[[str], None] = print, cache: dict | None = None,
          jobs: int | None = None) -> Report:
    """Build the book of `project` into `out`. Raises BuildError on the first bad source.

    `cache`, when given, keeps each page's recorded outputs between builds (builder.devserve):
    a page's cells run again only when their code, timeouts or the harness they import changed."""
    started = time.monotonic()
    report = Report()
    course = course_stage.load(project)
    written = course.written
    log(f"load     {project.rel(course.path)}: {len(course.pages)} pages, {len(written)} written")

    sources = {}
    for page in written:
        sources[page.id] = parsed = source_stage.parse(project, course, page)
        log(f"parse    {parsed.rel}: {_count(len(parsed.cells), 'cell')}, "
            f"{_count(len(parsed.labs), 'lab')}, {_count(len(parsed.figures), 'figure')}")

    labs = Labs(project, course)
    glossary = check_rules(project, course, sources, labs)
    log(f"rules    {len(sources)} pages keep the book's rules; "
        f"{sum(len(s.model.citations) for s in sources.values())} Tau citations locked; "
        f"{_count(len(glossary.terms), 'term')} in the glossary, none used before its page")
    clock = time.monotonic()
    proven = execute_book(project, sources, labs, cache=cache, log=log, jobs=jobs)
    log(f"execute  {sum(len(s.cells) for s in sources.values())} cells of {len(sources)} pages "
        f"proven in {time.monotonic() - clock:.1f} s")

    renderer = Renderer(project, course, glossary)
    files: dict[str, Content] = {}
    manifest_pages = []
    drawn = []      # (parsed, outputs, labs) of every written page, for print.html
    for page in course.pages:
        if not page.written:
            manifest_pages.append(_manifest_entry(page))
            continue
        parsed = sources[page.id]
        outputs = proven[page.id]
        views = labs.views(page, parsed.rel) if page.labs else {}
        if page.kind != "welcome":
            parsed.meta["now"] = labs.inventory(page)
        files[page.path] = renderer.lesson(parsed, outputs, views)
        drawn.append((parsed, outputs, views))
        for src in parsed.figures:
            files[f"assets/{src}"] = project.room(page) / src
        if page.labs:
            files.update(labs.downloads(page))
            files.update(labs.solutions(page))
        manifest_pages.append(_manifest_entry(page, parsed, views))
        report.pages += 1
        report.cells += len(parsed.cells)
        report.labs += len(views)
    files.update(labs.py(written))
    files["glossary.html"] = renderer.glossary_page()
    documents = search.documents([(page.path, page.named(lesson_word=True), files[page.path]) for page in written]
                                 + [("glossary.html", "Glossary", files["glossary.html"])])
    files["index.html"] = renderer.index()
    files["404.html"] = renderer.missing()
    files["print.html"] = renderer.book(drawn)
    files["review.html"] = renderer.review()
    files[questions.TARGET] = questions.questions_json(
        [(page, renderer.drawn.get(page.id, [])) for page in written])
    files.update(_static(project))
    log(f"render   {report.pages} pages, the course map, the whole book to print, the review "
        f"and the glossary")

    manifest = {"build": content_hash(files), "pages": manifest_pages}
    files["course.json"] = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    # For static hosts that read a `_headers` file (Netlify, Cloudflare Pages): the isolation that
    # lets Stop interrupt Python instead of ending it. Elsewhere the service worker adds these
    # headers from a reader's second visit on (README, "Publishing the book").
    files["_headers"] = names.headers_file()

    def finish(folder: Path) -> None:
        if assets:
            from . import assets as browser_assets, snapshot
            browser_assets.build(folder)
            snapshot.build(folder)      # after Pyodide and py/ are in place: made from them
            search.build(folder, documents, terms=search.term_homes(glossary))
        offline.write_precache(folder)  # last: it lists every file the build wrote

    report.files = write_site(out, files, finish=finish)
    report.manifest = manifest
    report.seconds = time.monotonic() - started
    log(f"write    {out}: {report.files} files, build {manifest['build']}, "
        f"{report.seconds:.1f} s")
    return report
