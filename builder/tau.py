"""Tau citations, checked without Tau on the machine: `lessons/tau.lock.json`.

An author who has a copy of Tau runs `python build.py cite --tau PATH` (PATH: a git repository of
Tau, bare or not, that holds the pinned commit). It reads every {tau} citation of every written
page, takes the cited lines from the pinned commit, and writes the lock: for each citation its
path, lines, and a SHA-256 of the cited text. The build then needs no copy of Tau: it fails on a
citation the lock lacks (cite again, and read what you cite) and on a lock entry no page cites
(a stale lock). A citation whose lines run past the end of the file fails `cite`."""
from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .errors import BuildError
from .model import Citation

LOCK_NAME = "tau.lock.json"


class CiteError(Exception):
    """`cite` could not read a cited file or lines at the pinned commit."""


@dataclass(frozen=True)
class Lock:
    commit: str
    entries: dict[str, dict]       # "path:12-20" -> {"path", "first", "last", "sha256"}


def lock_path(lessons: Path) -> Path:
    return lessons / LOCK_NAME


def read(lessons: Path, rel: str = f"lessons/{LOCK_NAME}") -> Lock | None:
    """The lock, or None when there is none. A lock that is not one (a merge conflict left in
    it, a key missing) is a BuildError at `rel`: write it again with `cite`."""
    path = lock_path(lessons)
    if not path.exists():
        return None
    again = "run `python build.py cite --tau PATH-TO-TAU` to write it again"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise BuildError(rel, error.lineno, f"not valid JSON ({error.msg}, column {error.colno}); "
                                            f"{again}") from None
    if not isinstance(data, dict) or not isinstance(data.get("commit"), str) \
            or not isinstance(data.get("citations"), dict):
        raise BuildError(rel, 1, f"a lock holds \"commit\" (a string) and \"citations\" (an "
                                 f"object); {again}")
    return Lock(commit=data["commit"], entries=data["citations"])


def cited_text(repo: Path, commit: str, citation: Citation) -> str:
    """The cited lines (or the whole file) at `commit`, read with git."""
    done = subprocess.run(["git", f"--git-dir={_git_dir(repo)}", "show", f"{commit}:{citation.path}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise CiteError(f"{citation.path} is not in Tau at {commit[:12]}: {done.stderr.strip()}")
    if citation.first is None:
        return done.stdout
    lines = done.stdout.splitlines(keepends=True)
    if citation.last > len(lines) or citation.first < 1 or citation.first > citation.last:
        raise CiteError(f"{citation.ref}: the file has {len(lines)} lines at {commit[:12]}")
    return "".join(lines[citation.first - 1:citation.last])


def check_repo(repo: Path, commit: str) -> None:
    """`repo` is a git repository holding `commit`, or a CiteError says which it is not, before
    any citation is read (else the first citation would take the blame)."""
    if not repo.is_dir():
        raise CiteError(f"{repo}: no such folder; give the path of a copy of Tau")
    git = ["git", f"--git-dir={_git_dir(repo)}"]
    if subprocess.run([*git, "rev-parse", "--git-dir"], capture_output=True).returncode != 0:
        raise CiteError(f"{repo} is not a git repository; give the path of a copy of Tau (bare or "
                        "not)")
    if subprocess.run([*git, "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True).returncode:
        raise CiteError(f"{repo} does not hold the pinned commit {commit[:12]}: fetch it there "
                        "(git fetch), or give another copy of Tau")


def _git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write(lessons: Path, repo: Path, commit: str, citations: list[Citation],
          places: dict[str, str] | None = None) -> Lock:
    """Read every citation at `commit` in `repo` and write the lock. Raises CiteError, which
    starts with the citation's place (`places`: ref -> "page file:line" of its first use)."""
    check_repo(repo, commit)
    entries = {}
    for citation in sorted(citations, key=lambda c: c.ref):
        try:
            text = cited_text(repo, commit, citation)
        except CiteError as error:
            if places and citation.ref in places:
                said = str(error).removeprefix(f"{citation.ref}: ")
                raise CiteError(f"{places[citation.ref]}: {{tau}}`{citation.ref}`: {said}") from None
            raise
        entries[citation.ref] = {"path": citation.path, "first": citation.first,
                                 "last": citation.last, "sha256": digest(text)}
    lock_path(lessons).write_text(json.dumps({"commit": commit, "citations": entries}, indent=1)
                                  + "\n", encoding="utf-8")
    return Lock(commit=commit, entries=entries)


def check(lock: Lock | None, commit: str, cited: dict[str, list[tuple[str, int]]],
          lock_rel: str) -> None:
    """Every citation is in the lock, at the pinned commit, and every lock entry is cited.
    `cited`: ref -> [(page file, line)] of every written page."""
    hint = "run `python build.py cite --tau PATH-TO-TAU` and read what you cite"
    if lock is None:
        if cited:
            ref, places = next(iter(cited.items()))
            raise BuildError(places[0][0], places[0][1], f"{{tau}}`{ref}` is cited and there is "
                                                         f"no {lock_rel}: {hint}")
        return
    if lock.commit != commit:
        raise BuildError(lock_rel, 1, f"the lock is for Tau {lock.commit[:12]}; course.yaml pins "
                                      f"{commit[:12]}: {hint}")
    for ref, places in cited.items():
        if ref not in lock.entries:
            raise BuildError(places[0][0], places[0][1], f"{{tau}}`{ref}` is not in {lock_rel}: "
                                                         f"{hint}")
    stale = sorted(set(lock.entries) - set(cited))
    if stale:
        raise BuildError(lock_rel, 1, f"{stale[0]} is in the lock and no page cites it: {hint}")
