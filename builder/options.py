"""The options every directive and cell takes, declared once: names, types, ranges, defaults.

A directive's line (`::: figure src=figures/x.svg`) and a cell's fence (```` ```python cell
lab=2 timeout=5 ````) carry options. Each kind of directive, and the cell, has a `Schema` here;
the parser (source.py) reads the text through it and gets typed values, or an `OptionError`
that names the option, which it reports at the directive's `file:line`. Nothing after the parse
reads option text again.

Three shapes of option:
  - a flag, a bare word (`right`, `editable`);
  - a value, `name=value`, read by its kind (`Int`, `Seconds`, `Name`, `Path`);
  - the words after the name, whole (`::: aside Why a full stop`: the title; `::: lab 2`).
"""
from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass


class OptionError(ValueError):
    """An option that cannot be read: the message names it."""


# -- kinds of value ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Int:
    """A whole number in [low, high]."""

    low: int = 1
    high: int | None = None

    def read(self, name: str, text: str) -> int:
        if not re.fullmatch(r"\d+", text):
            raise OptionError(f"{name}={text}: not a whole number")
        value = int(text)
        if value < self.low or (self.high is not None and value > self.high):
            top = f" to {self.high}" if self.high is not None else " or more"
            raise OptionError(f"{name}={text}: must be {self.low}{top}")
        return value

    def describe(self) -> str:
        return "a whole number" + (f" from {self.low}" if self.low else "")


@dataclass(frozen=True)
class Seconds:
    """A finite number of seconds, above `low` and at most `high`: no nan, no inf, no zero."""

    low: float = 0.0
    high: float = 600.0

    def read(self, name: str, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise OptionError(f"{name}={text}: not a number of seconds") from None
        if not math.isfinite(value) or not self.low < value <= self.high:
            raise OptionError(f"{name}={text}: a number of seconds above {self.low:g} and at "
                              f"most {self.high:g}")
        return value

    def describe(self) -> str:
        return f"seconds, above {self.low:g} and at most {self.high:g}"


@dataclass(frozen=True)
class Name:
    """A name made of letters, digits, - and _."""

    pattern: str = r"[A-Za-z0-9_-]+"

    def read(self, name: str, text: str) -> str:
        if not re.fullmatch(self.pattern, text):
            raise OptionError(f"{name}={text}: use letters, digits, - and _")
        return text

    def describe(self) -> str:
        return "letters, digits, - and _"


@dataclass(frozen=True)
class Path:
    """A relative path inside the page's folder, under `under`."""

    under: str = ""

    def read(self, name: str, text: str) -> str:
        parts = text.split("/")
        if not text or text.startswith("/") or ".." in parts or "\\" in text:
            raise OptionError(f"{name}={text}: a path inside the page's folder")
        if self.under and not text.startswith(self.under):
            raise OptionError(f"{name}={text}: must be under {self.under}")
        return text

    def describe(self) -> str:
        return f"a path under {self.under}" if self.under else "a path"


Kind = Int | Seconds | Name | Path


@dataclass(frozen=True)
class Value:
    """`name=value`, read by `kind`; `default` when absent (unless `required`)."""

    name: str
    kind: Kind
    default: object = None
    required: bool = False
    doc: str = ""                   # one line for the authoring guide's reference


@dataclass(frozen=True)
class Words:
    """The words after the directive's name, as one text (a title, a lab's number, a page id).

    `kind`, if given, reads the text (an Int for `::: lab 2`)."""

    name: str                       # how messages and the typed options call it: "title"
    required: bool = False
    kind: Kind | None = None
    doc: str = ""                   # one line for the authoring guide's reference


@dataclass(frozen=True)
class Flag:
    """A word that is there or not (`editable`, `right`)."""

    name: str
    doc: str = ""                   # one line for the authoring guide's reference


@dataclass(frozen=True)
class Schema:
    """What one directive (or the cell) accepts."""

    flags: tuple[Flag, ...] = ()
    values: tuple[Value, ...] = ()
    words: Words | None = None
    example: str = ""               # how to write it, for a message: "::: lab 1"

    def usage(self) -> str:
        said = [flag.name for flag in self.flags] + [f"{v.name}=" + v.kind.__class__.__name__.upper()
                                   for v in self.values]
        if self.words is not None:
            said.append(f"<{self.words.name}>")
        return ", ".join(said) if said else "no options"

    def read(self, text: str) -> dict[str, object]:
        """The typed options of `text`: every flag (True/False), every value (or its default),
        and the words. Raises OptionError naming the option that is wrong."""
        text = text.strip()
        options: dict[str, object] = {flag.name: False for flag in self.flags}
        options.update({value.name: value.default for value in self.values})
        if self.words is not None:
            options[self.words.name] = None
            if text and self.words.kind is not None:
                options[self.words.name] = self.words.kind.read(self.words.name, text)
            elif text:
                options[self.words.name] = text
            elif self.words.required:
                raise OptionError(f"needs its {self.words.name}" +
                                  (f": '{self.example}'" if self.example else ""))
            return options
        try:
            words = shlex.split(text)
        except ValueError as error:
            raise OptionError(f"options {text!r}: {str(error).lower()} (an unbalanced quote)") from None
        by_name = {value.name: value for value in self.values}
        seen: set[str] = set()
        for word in words:
            key, sep, raw = word.partition("=")
            if key in seen:
                raise OptionError(f"{key} is given twice")
            seen.add(key)
            if sep:
                if key not in by_name:
                    raise OptionError(f"unknown option {key}= (options: {self.usage()})")
                options[key] = by_name[key].kind.read(key, raw)
            elif word in {flag.name for flag in self.flags}:
                options[word] = True
            elif word in by_name:
                raise OptionError(f"{word} needs a value: {word}=<{by_name[word].kind.describe()}>")
            else:
                raise OptionError(f"unknown option {word!r} (options: {self.usage()})")
        for value in self.values:
            if value.required and value.name not in seen:
                raise OptionError(f"needs {value.name}=" +
                                  (f" ('{self.example}')" if self.example else ""))
        return options


NONE = Schema()


# -- the cell ----------------------------------------------------------------------------------

DEFAULT_TIMEOUT = 10.0             # seconds a cell may run, at build time and in the page
MAX_TIMEOUT = 600.0
TIMEOUT = Seconds(high=MAX_TIMEOUT)  # a cell's timeout=, and `build.py run --timeout`

CELL = Schema(
    flags=(Flag("editable", "the reader may edit it; Reset restores it"),
           Flag("raises", "the cell is meant to end in an exception (its traceback is part of its "
                          "output)"),
           Flag("answers", "the cell answers the check or prompt just before it: its output stays "
                           "folded until the reader has answered, or runs the cell (readable "
                           "without JavaScript, folded)")),
    values=(Value("lab", Int(low=1), doc="once the reader's lab N passes, the cell may run against "
                                         "their harness"),
            Value("timeout", TIMEOUT, DEFAULT_TIMEOUT,
                  doc=f"seconds, above 0 and at most {MAX_TIMEOUT:g} (default {DEFAULT_TIMEOUT:g}); "
                      "over it, the build stops and the page stops the cell"),
            Value("id", Name(), doc="the cell's id is `<lesson>-<name>` instead of `<lesson>-<n>`")),
    example="```python cell editable lab=1 timeout=20 id=NAME")
