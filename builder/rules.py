"""The book's rules, checked by the build for every written page.

The parser (source.py) refuses what cannot be read; these are what makes a page good, read off
the page model (model.py). Each rule is a small function of the page and what lies around it
(`Around`: its room, its labs without a wrong design) that returns the problems it finds as
(line, message). The build stops on a page that has any, and says every one of them in line order,
each as `lessons/<folder>/page.md:<line>: <message>` (the first is the error's own place), so one
build lists all the fixes a page needs. Adding a rule is adding a function to RULES."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .errors import BuildError
from .model import Check
from .source import Source

Problem = tuple[int, str]
NEARLY = re.compile(r"nearly the code", re.I)


@dataclass(frozen=True)
class Around:
    """What a rule may read besides the page: the page's room (its figures' files) and the labs
    of the page that no design in its wrong.yaml is written for."""

    room: Path | None = None
    labs_without_wrong_designs: tuple[int, ...] = ()


def checks_have_three_explained_options(source: Source, around: Around = Around()) -> Iterator[Problem]:
    for check in source.model.checks:
        if len(check.options) < 3:
            yield check.line, (f"check {check.number} has {len(check.options)} options; a check "
                               f"has at least three")
        for option in check.options:
            if not option.explanation.strip():
                yield option.line, (f"check {check.number}: this option has no explanation (say "
                                    f"what it misses, or why it holds)")


def prompts_have_an_answer_and_hints(source: Source, around: Around = Around()) -> Iterator[Problem]:
    for prompt in source.model.prompts:
        if not prompt.answer.strip():
            yield prompt.line, f"prompt {prompt.number}: the model answer is empty"
        if not prompt.hints:
            yield prompt.line, f"prompt {prompt.number} has no '::: hint'"
        if not prompt.misses.strip():
            yield prompt.line, f"prompt {prompt.number} has no '::: misses' (the common answers)"


def prompts_have_one_misses_block(source: Source, around: Around = Around()) -> Iterator[Problem]:
    """A reader sees the common answers as one list; a second block is a draft left behind."""
    for prompt in source.model.prompts:
        for line in prompt.misses_lines[1:]:
            yield line, (f"prompt {prompt.number} has a second '::: misses' (the first is on line "
                         f"{prompt.misses_lines[0]}): put the common answers in one list")


def labs_have_spec_hints_and_done(source: Source, around: Around = Around()) -> Iterator[Problem]:
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


def cells_declare_their_output(source: Source, around: Around = Around()) -> Iterator[Problem]:
    for cell in source.cells:
        if cell.expected is None:
            yield cell.line, (f"cell {cell.id} declares no ```output: write what it prints, so "
                              f"the build proves it")


DARK = "prefers-color-scheme: dark"


def figures_have_title_desc_and_dark_colours(source: Source, around: Around) -> Iterator[Problem]:
    """A figure is read by screen readers (its <title> and <desc>) and drawn in both themes: the
    toggle reaches an SVG in an <img> only through prefers-color-scheme (book.css)."""
    for figure in source.model.figures:
        svg = (around.room / figure.src).read_text(encoding="utf-8")
        for tag in ("title", "desc"):
            if f"<{tag}" not in svg:
                yield figure.line, f"{figure.src} has no <{tag}> (for readers who cannot see it)"
        if DARK not in svg.replace("  ", " "):
            yield figure.line, (f"{figure.src} has no dark colours: add `@media ({DARK}) {{ ... }}` "
                                f"to its <style>, so the dark theme does not draw it dark on dark")


def labs_have_a_wrong_design(source: Source, around: Around) -> Iterator[Problem]:
    for lab in source.model.labs:
        if lab.number in around.labs_without_wrong_designs:
            yield lab.line, (f"lab {lab.number} has no wrong design: add one to wrong.yaml (a "
                             f"change the lesson argues against, which its tests must fail)")


RULES: list[Callable[[Source, Around], Iterable[Problem]]] = [
    checks_have_three_explained_options, prompts_have_an_answer_and_hints,
    prompts_have_one_misses_block, labs_have_spec_hints_and_done, cells_declare_their_output,
    figures_have_title_desc_and_dark_colours, labs_have_a_wrong_design]


def check(source: Source, around: Around) -> None:
    """Stop the build if `source` breaks any rule, naming every problem in line order: the first
    is the error's place and message, the others follow in its detail, one a line, each with
    its own `file:line:` (MyST reports every problem of a document in one run, so does this)."""
    problems = sorted({p for rule in RULES for p in rule(source, around)})
    if problems:
        (line, message), rest = problems[0], problems[1:]
        raise BuildError(source.rel, line, message,
                         "\n".join(f"{source.rel}:{at}: {said}" for at, said in rest))



# -- the whole book: where the right answers sit ------------------------------------------------

ALPHA = 0.001          # how unlikely by chance a count must be to stop the build (one in a thousand)
NEVER_ALPHA = 0.01     # a position never right: stops the build once that is under 1% likely


@dataclass
class Tally:
    """How often something (the right option in position 3; the right option being the longest)
    happened across the book's checks, against what chance gives: each check contributes 1/n of
    its n options, when it has the position at all."""

    name: str
    available: int                  # checks where it could happen
    observed: int
    chances: list[float]            # per check that could, the chance it happens there
    too_few_matters: bool = True    # a position seldom right is a tell; the right option seldom
                                    # the longest is not one a rule asks about

    @property
    def expected(self) -> float:
        return sum(self.chances)

    def distribution(self) -> list[float]:
        """P(count = k) for k = 0..available: the sum of independent Bernoulli trials."""
        dist = [1.0]
        for p in self.chances:
            dist = [a * (1 - p) + b * p for a, b in zip(dist + [0.0], [0.0] + dist)]
        return dist

    def problem(self) -> str | None:
        dist = self.distribution()
        above = sum(dist[self.observed:])
        below = sum(dist[:self.observed + 1])
        said = (f"{self.observed} of {self.available} checks, {self.expected:.1f} by chance")
        subject = (f"the right option is {self.name}" if self.name.startswith("the ")
                   else f"the right option is in {self.name}")
        if self.too_few_matters and self.observed == 0 and dist[0] < NEVER_ALPHA:
            return f"{subject} in none of {self.available} checks ({self.expected:.1f} by chance)"
        if above < ALPHA:
            return f"{subject} far more often than chance ({said})"
        if self.too_few_matters and below < ALPHA:
            return f"{subject} far less often than chance ({said})"
        return None


def _longest_is_right(check: Check) -> bool:
    """The right option is longer than every other (its text, folded)."""
    right = len(check.right.text)
    return all(len(o.text) < right for o in check.options if not o.right)


def answer_tallies(checks: list[Check]) -> list[Tally]:
    """One tally per position (first, second, ...) and one for "the right option is the longest"."""
    tallies = []
    for position in range(1, max((len(c.options) for c in checks), default=0) + 1):
        having = [c for c in checks if len(c.options) >= position]
        tallies.append(Tally(name=f"position {position}", available=len(having),
                             observed=sum(c.options[position - 1].right for c in having),
                             chances=[1 / len(c.options) for c in having]))
    tallies.append(Tally(name="the longest option", available=len(checks),
                         observed=sum(_longest_is_right(c) for c in checks),
                         chances=[1 / len(c.options) for c in checks], too_few_matters=False))
    return tallies


def answer_table(tallies: list[Tally]) -> str:
    rows = [("", "checks", "right", "by chance")]
    rows += [(t.name, str(t.available), str(t.observed), f"{t.expected:.1f}") for t in tallies]
    width = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(f"  {row[0]:<{width[0]}}  " + "  ".join(f"{cell:>{width[i]}}" for i, cell in
                                                            enumerate(row[1:], 1)) for row in rows)


def right_answers_are_not_guessable(checks: list[Check]) -> tuple[str, str] | None:
    """Across the whole book, the right option sits in every position about as often as chance
    puts it there, and is the longest option no more often than chance: else a reader learns to
    pick "the second" or "the longest" without reading. (message, the position table) or None."""
    tallies = answer_tallies(checks)
    problems = [p for p in (t.problem() for t in tallies) if p]
    if not problems:
        return None
    return (f"right answers are lopsided across the book's {len(checks)} checks: "
            + "; ".join(problems), answer_table(tallies))


def check_book(sources: Iterable[Source], rel: str) -> None:
    """The rules about the whole book (`rel`: course.yaml, where its pages are listed)."""
    checks = [check for source in sources for check in source.model.checks]
    found = right_answers_are_not_guessable(checks)
    if found:
        raise BuildError(rel, 0, found[0], found[1])
