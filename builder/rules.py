"""The book's rules, checked by the build for every written page.

The parser (source.py) refuses what cannot be read; these are what makes a page good, read off
the page model (model.py). Each rule is a small function that returns the problems it finds as
(line, message); the build stops at the first, `lessons/<folder>/page.md:<line>: <message>`,
like any bad source. Adding a rule is adding a function to RULES."""
from __future__ import annotations

import re
from typing import Callable, Iterator

from .errors import BuildError
from .source import Source

Problem = tuple[int, str]
NEARLY = re.compile(r"nearly the code", re.I)


def checks_have_three_explained_options(source: Source) -> Iterator[Problem]:
    for check in source.model.checks:
        if len(check.options) < 3:
            yield check.line, (f"check {check.number} has {len(check.options)} options; a check "
                               f"has at least three")
        for option in check.options:
            if not option.explanation.strip():
                yield option.line, (f"check {check.number}: this option has no explanation (say "
                                    f"what it misses, or why it holds)")


def prompts_have_an_answer_and_hints(source: Source) -> Iterator[Problem]:
    for prompt in source.model.prompts:
        if not prompt.answer.strip():
            yield prompt.line, f"prompt {prompt.number}: the model answer is empty"
        if not prompt.hints:
            yield prompt.line, f"prompt {prompt.number} has no '::: hint'"
        if not prompt.misses.strip():
            yield prompt.line, f"prompt {prompt.number} has no '::: misses' (the common answers)"


def labs_have_spec_hints_and_done(source: Source) -> Iterator[Problem]:
    for lab in source.model.labs:
        if not lab.spec.strip():
            yield lab.line, f"lab {lab.number} has no spec (prose before its hints)"
        if not lab.hints:
            yield lab.line, f"lab {lab.number} has no hints"
        elif not NEARLY.search(lab.hints[-1].title):
            yield lab.hints[-1].line, (f"lab {lab.number}: the last hint is titled 'Nearly the "
                                       f"code' (today: {lab.hints[-1].title or 'no title'!r})")
        if not lab.done.strip():
            yield lab.line, f"lab {lab.number} has no '::: done'"


def cells_declare_their_output(source: Source) -> Iterator[Problem]:
    for cell in source.cells:
        if cell.expected is None:
            yield cell.line, (f"cell {cell.id} declares no ```output: write what it prints, so "
                              f"the build proves it")


DARK = "prefers-color-scheme: dark"


def figures_have_title_desc_and_dark_colours(source: Source, room) -> Iterator[Problem]:
    """A figure is read by screen readers (its <title> and <desc>) and drawn in both themes: the
    toggle reaches an SVG in an <img> only through prefers-color-scheme (book.css)."""
    for figure in source.model.figures:
        svg = (room / figure.src).read_text(encoding="utf-8")
        for tag in ("title", "desc"):
            if f"<{tag}" not in svg:
                yield figure.line, f"{figure.src} has no <{tag}> (for readers who cannot see it)"
        if DARK not in svg.replace("  ", " "):
            yield figure.line, (f"{figure.src} has no dark colours: add `@media ({DARK}) {{ ... }}` "
                                f"to its <style>, so the dark theme does not draw it dark on dark")


RULES: list[Callable] = [checks_have_three_explained_options, prompts_have_an_answer_and_hints,
                         labs_have_spec_hints_and_done, cells_declare_their_output]


def check(source: Source, room, labs_without_wrong_designs: list[int]) -> None:
    """Stop the build at the first problem of `source`."""
    problems = [p for rule in RULES for p in rule(source)]
    problems += list(figures_have_title_desc_and_dark_colours(source, room))
    for number in labs_without_wrong_designs:
        lab = next(l for l in source.model.labs if l.number == number)
        problems.append((lab.line, f"lab {number} has no wrong design: add one to wrong.yaml "
                                   f"(a change the lesson argues against, which its tests must fail)"))
    if problems:
        line, message = min(problems)
        raise BuildError(source.rel, line, message)

