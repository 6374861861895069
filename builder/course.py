"""Stage 1, load: read `lessons/course.yaml`, the order of every page and the Tau pin.

Everything that says where a page is, what comes before it and which stage points it owns is
worked out here once, so no later stage reads the YAML again."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import stages

from .errors import BuildError
from .project import Project

KINDS = ("welcome", "lesson", "checkpoint", "side-quest", "closing")
MAIN_LABS = ("lesson", "closing")   # kinds whose labs are points of the main chain


@dataclass
class Page:
    """One entry of the course. Its room is `lessons/<folder>/`: the page is written once the
    folder holds `page.md`; a lesson's lab tests (`tests.py`), wrong designs (`wrong.yaml`) and
    figures (`figures/`) live beside it, written or not."""

    id: str
    kind: str
    title: str
    subtitle: str = ""
    minutes: int | None = None
    folder: str = ""
    written: bool = False          # lessons/<folder>/page.md exists
    labs: list[str] = field(default_factory=list)
    capability: str = ""
    after: str | None = None
    line: int = 0                  # where it is in course.yaml

    @property
    def file(self) -> str:
        """The page's source, relative to lessons/."""
        return f"{self.folder}/page.md"

    @property
    def number(self) -> int | str:
        """What the page is called by: 11 for lesson "11", "B" for checkpoint B."""
        return int(self.id) if self.id.isdigit() else self.id

    @property
    def path(self) -> str:
        """The page's file in the built site (flat)."""
        if self.kind == "welcome":
            return "welcome.html"
        if self.kind == "lesson":
            return f"lesson-{self.id}.html"
        if self.kind == "closing":
            return "closing.html"
        return f"{self.kind}-{self.id.lower()}.html"

    # How a page is named, in one place: its label alone, its heading, and the label joined to
    # its title for a link, the window's title, a search result and the course map's Continue.

    @property
    def label(self) -> str:
        """"11", "Checkpoint B", "Side quest S2"; the welcome and closing pages, their title."""
        if self.kind == "checkpoint":
            return f"Checkpoint {self.id}"
        if self.kind == "side-quest":
            return f"Side quest {self.id}"
        if self.kind in ("welcome", "closing"):
            return self.title
        return self.id

    @property
    def heading(self) -> str:
        """What the page's header (and the book to print) calls it above its title: "Lesson 11",
        "Checkpoint B"; nothing for the welcome page."""
        if self.kind == "lesson":
            return f"Lesson {self.id}"
        return "" if self.kind == "welcome" else self.label

    def named(self, sep: str = " · ", lesson_word: bool = False) -> str:
        """The label and the title: "11 · The power cut" (with lesson_word, "Lesson 11 · ..."),
        "Checkpoint B{sep}Title"; the welcome and closing pages, their title alone."""
        if self.kind in ("welcome", "closing"):
            return self.title
        if self.kind == "lesson":
            return f"{'Lesson ' if lesson_word else ''}{self.id} · {self.title}"
        return f"{self.label}{sep}{self.title}"

    def point(self, lab: int) -> str:
        """The stage point of this page's lab `lab` (1-based): "11.2", or "S2.1" for a side
        quest's."""
        return f"{int(self.id)}.{lab}" if self.kind in MAIN_LABS else f"{self.id}.{lab}"

    @property
    def points(self) -> list[str]:
        if self.kind not in (*MAIN_LABS, "side-quest"):
            return []
        return [self.point(k) for k in range(1, len(self.labs) + 1)]


@dataclass
class Course:
    """Every page in reading order, and the Tau commit every citation is pinned to."""

    pages: list[Page]
    tau_repo: str
    tau_commit: str
    path: Path

    def page(self, page_id: str) -> Page | None:
        return next((p for p in self.pages if p.id == page_id), None)

    @property
    def written(self) -> list[Page]:
        return [p for p in self.pages if p.written]

    @property
    def points(self) -> list[str]:
        """Every stage point of the course, in course order: 1.1 < 1.2 < 2.1 ... with a side
        quest's points (S2.1, S2.2) where the side quest stands."""
        return list(self.parents)

    @property
    def page_names(self) -> dict[str, str]:
        """Pages a starting file names by their kind, not "lesson N" (the closing page)."""
        return {page.id: stages.PAGE_NAMES[page.kind] for page in self.pages
                if page.kind in stages.PAGE_NAMES}

    @property
    def parents(self) -> dict[str, str | None]:
        """Each stage point and the point it follows. The lessons' labs are one main chain; a side
        quest's labs are a side branch off the last main point before it, which no later lesson
        follows (docs/architecture.md, "Stage points")."""
        parents: dict[str, str | None] = {}
        main: str | None = None
        for page in self.pages:
            before = main
            for point in page.points:
                parents[point], before = before, point
            if page.kind in MAIN_LABS and page.points:
                main = before
        return parents

    def base(self, page: "Page") -> str | None:
        """The point a page's cells start from when it has no labs of its own: the last main
        point before it (a side quest's points are never another page's base)."""
        found = None
        for other in self.pages:
            if other is page:
                break
            if other.kind in MAIN_LABS and other.points:
                found = other.points[-1]
        return found

    def neighbours(self, page: Page) -> tuple[Page | None, Page | None]:
        """The pages before and after `page` on the main path, in reading order. Side quests are
        optional and off that path: a lesson's next page is the next lesson or checkpoint, never
        the side quest that hangs off it (the lesson points to that one in its own note). A side
        quest goes back to the page it hangs off (`after`) and on to the page after that."""
        main = [p for p in self.pages if p.kind != "side-quest"]
        if page.kind == "side-quest":
            anchor = self.page(page.after) if page.after else None
            if anchor is None or anchor not in main:   # no `after`: where it stands in the list
                i = self.pages.index(page)
                anchor = next((p for p in reversed(self.pages[:i]) if p in main), None)
            if anchor is None:
                return None, main[0] if main else None
            i = main.index(anchor)
            return anchor, main[i + 1] if i + 1 < len(main) else None
        i = main.index(page)
        return (main[i - 1] if i else None, main[i + 1] if i + 1 < len(main) else None)

    def capabilities(self, page: Page) -> list[str]:
        """The capability of every lesson up to and including `page`, in course order."""
        found = []
        for other in self.pages:
            if other.kind in MAIN_LABS and other.capability:
                found.append(other.capability)
            if other is page:
                break
        return found

    def tau_url(self, path: str, lines: str = "") -> str:
        """A link to `path` (and lines "a-b" or "a") on GitHub at the pinned commit."""
        url = f"{self.tau_repo.rstrip('/')}/blob/{self.tau_commit}/{path}"
        if lines:
            first, _, last = lines.partition("-")
            url += f"#L{first}" + (f"-L{last}" if last else "")
        return url


class LineLoader(yaml.SafeLoader):
    """A YAML loader that remembers the line of every mapping (as "__line__"), for error
    messages; course.yaml and every wrong.yaml are read with it."""


def _mapping_with_line(loader: LineLoader, node: yaml.MappingNode) -> dict:
    mapping = loader.construct_mapping(node, deep=True)
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


class _Items(list):
    """A YAML list that knows the line of each item (`lines`: index -> line, from 1)."""
    lines: dict[int, int]


def _sequence_with_lines(loader: LineLoader, node: yaml.SequenceNode) -> list:
    items = _Items(loader.construct_sequence(node, deep=True))
    items.lines = {i: child.start_mark.line + 1 for i, child in enumerate(node.value)}
    return items


LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_with_line)
LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence_with_lines)


def load(project: Project) -> Course:
    """Read and check course.yaml: known kinds, unique ids, files that exist, a Tau pin."""
    path = project.course_file
    where = project.rel(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=LineLoader)
    except FileNotFoundError:
        raise BuildError(where, 0, "there is no course file") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise BuildError(where, mark.line + 1 if mark else 0, f"not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise BuildError(where, 0, "the course file holds no mapping: it needs tau: (repo and "
                                   "commit) and pages: (a list, one entry a page)")
    tau = data.get("tau") or {}
    if not isinstance(tau, dict) or not tau.get("repo") or not tau.get("commit"):
        raise BuildError(where, data.get("__line__", 1), "the course needs tau: repo and commit")
    entries = data.get("pages") or []
    if not isinstance(entries, list):
        raise BuildError(where, data.get("__line__", 1), "pages: is a list, one entry a page")
    pages, seen = [], set()
    for number, raw in enumerate(entries, 1):
        if not isinstance(raw, dict):
            raise BuildError(where, getattr(entries, "lines", {}).get(number - 1, 0),
                             f"page entry {number} is {raw!r}, not a mapping: a page is id:, "
                             "kind:, title: and folder:")
        line = raw.get("__line__", 0)
        for key in ("id", "kind", "title"):
            if not raw.get(key):
                raise BuildError(where, line, f"a page without {key!r}")
        page = Page(id=str(raw["id"]), kind=raw["kind"], title=raw["title"],
                    subtitle=raw.get("subtitle", ""), minutes=raw.get("minutes"),
                    folder=str(raw.get("folder") or ""), labs=list(raw.get("labs") or []),
                    capability=raw.get("capability", ""),
                    after=str(raw["after"]) if raw.get("after") is not None else None, line=line)
        if page.kind not in KINDS:
            raise BuildError(where, line, f"page {page.id}: unknown kind {page.kind!r} "
                                          f"(one of {', '.join(KINDS)})")
        if page.id in seen:
            raise BuildError(where, line, f"page id {page.id!r} appears twice")
        if any(other.folder == page.folder for other in pages):
            raise BuildError(where, line, f"folder {page.folder!r} is named twice")
        if page.kind in MAIN_LABS and not page.id.isdigit():
            raise BuildError(where, line, f"{page.kind} id {page.id!r} is not a number")
        if page.labs and page.kind not in (*MAIN_LABS, "side-quest"):
            raise BuildError(where, line, f"page {page.id}: only a lesson, the closing page or a "
                                          "side quest has labs")
        if page.kind == "side-quest" and page.labs and not re.fullmatch(r"S\d+", page.id):
            raise BuildError(where, line, f"side quest {page.id!r} has labs: its id must be S and "
                                          "a number (S2), which names its stage points (S2.1)")
        if not page.folder or "/" in page.folder or page.folder.startswith("."):
            raise BuildError(where, line, f"page {page.id}: a page needs folder: <name> (its room "
                                          f"in lessons/)")
        if raw.get("file") is not None:
            raise BuildError(where, line, f"page {page.id}: file: is gone; name the page's folder "
                                          f"(folder: {page.folder}) and put page.md in it")
        page.written = (project.lessons / page.file).exists()
        seen.add(page.id)
        pages.append(page)
    return Course(pages=pages, tau_repo=tau["repo"], tau_commit=str(tau["commit"]), path=path)
