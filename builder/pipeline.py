"""The whole build, stage by stage: load -> parse -> execute -> labs -> render -> write.

Each stage is its own module; this one only runs them in order and says what each did, so a
build's log reads like the pipeline it is. Every source is parsed and checked before any cell
runs, and nothing is written until every page is rendered."""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import cells, code, course as course_stage, names, offline, rules, search, source as source_stage, tau, wrong
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
            "subtitle": page.subtitle, "minutes": page.minutes, "capability": page.capability or None,
            "path": page.path if page.written else None,
            "questions": (len(source.model.checks) + len(source.model.prompts)) if source else 0,
            "cells": [{"id": c.id, "editable": c.editable, "lab": c.lab}
                      for c in (source.cells if source else [])],
            "labs": [{"number": v.number, "title": v.title, "point": v.point,
                      "tests": [{"id": i, "sentence": s} for i, s in v.tests]}
                     for v in (views or {}).values()]}


def _search_label(page) -> str:
    """How a search result names its page: "Lesson 11 · The power cut"."""
    name = f"Lesson {page.id}" if page.kind == "lesson" else page.label
    return name if page.kind in ("welcome", "closing") else f"{name} · {page.title}"


def _cells_key(parsed, reference: str) -> str:
    """What a page's recorded outputs depend on: its cells as written and the harness they
    import. (The stage props in lab/ are watched too: devserve starts afresh when they change.)"""
    digest = hashlib.sha256(reference.encode("utf-8"))
    for cell in parsed.cells:
        digest.update(repr((cell.id, cell.source, cell.expected, cell.raises, cell.timeout)).encode())
    return digest.hexdigest()


def check_rules(project: Project, course, sources: dict, labs: Labs) -> None:
    """The book's rules (rules.py) on every written page, its wrong designs, and the Tau lock."""
    cited: dict[str, list[tuple[str, int]]] = {}
    for page_id, parsed in sources.items():
        page = parsed.page
        missing = []
        if page.labs:
            ids = {test_id for test_id, _, _ in labs.sentences(page)}
            designs = wrong.load(project, page, ids)
            wrong.check_applies(project, page, designs, labs.stages.solution)
            missing = [k for k in range(1, len(page.labs) + 1) if k not in {d.lab for d in designs}]
        rules.check(parsed, project.room(page), missing)
        for citation in parsed.model.citations:
            cited.setdefault(citation.ref, []).append((parsed.rel, citation.line))
    rules.check_book(sources.values(), project.rel(course.path))
    lock = tau.lock_path(project.lessons)
    tau.check(tau.read(project.lessons), course.tau_commit, cited, project.rel(lock))


def build(project: Project, out: Path, *, assets: bool = True,
          log: Callable[[str], None] = print, cache: dict | None = None) -> Report:
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
    check_rules(project, course, sources, labs)
    log(f"rules    {len(sources)} pages keep the book's rules; "
        f"{sum(len(s.model.citations) for s in sources.values())} Tau citations locked")
    renderer = Renderer(project, course)
    files: dict[str, Content] = {}
    manifest_pages = []
    drawn = []      # (parsed, outputs, labs) of every written page, for print.html
    for page in course.pages:
        if not page.written:
            manifest_pages.append(_manifest_entry(page))
            continue
        parsed = sources[page.id]
        outputs = {}
        if parsed.cells:
            clock = time.monotonic()
            reference = labs.reference(page)
            key = _cells_key(parsed, reference)
            if cache is not None and cache.get(page.id, (None,))[0] == key:
                outputs = cache[page.id][1]
            else:
                recorded = cells.execute(project, parsed.rel, reference, parsed.cells)
                outputs = {cell_id: r.output for cell_id, r in recorded.items()}
                if cache is not None:
                    cache[page.id] = (key, outputs)
                log(f"execute  {parsed.rel}: {_count(len(parsed.cells), 'cell')} proven in "
                    f"{time.monotonic() - clock:.1f} s")
        views = labs.views(page, parsed.rel) if page.labs else {}
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
    documents = search.documents([(page.path, _search_label(page), files[page.path]) for page in written])
    files["index.html"] = renderer.index()
    files["404.html"] = renderer.missing()
    files["print.html"] = renderer.book(drawn)
    files.update(_static(project))
    log(f"render   {report.pages} pages, the course map and the whole book to print")

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
            search.build(folder, documents)
        offline.write_precache(folder)  # last: it lists every file the build wrote

    report.files = write_site(out, files, finish=finish)
    report.manifest = manifest
    report.seconds = time.monotonic() - started
    log(f"write    {out}: {report.files} files, build {manifest['build']}, "
        f"{report.seconds:.1f} s")
    return report
