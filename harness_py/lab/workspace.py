"""An in-memory disk that can lose its power.

Real crash testing needs a real machine and a real plug. The book needs the same lessons in a web
page, deterministically, a thousand times a second, so the disk is a dict and the plug is a rule:

- `Workspace(files)` holds text files by path. Reading never creates a file, and a missing file
  raises FileNotFoundError with the message a real open() gives.
- Writing a file over is not one step. write_text first empties the file, then puts the new bytes
  in. A crash in between leaves the file empty or half-written, never "as it was".
- `ws.writes` lists every operation in order, as (op, path, text) tuples, so a cell can see what a
  program did to the disk and in what order.
- `ws.reboot()` is the process dying: a new Workspace holding the disk as the dead process left
  it, every byte it had handed to the operating system included, and an empty `writes`.
- `ws.reboot(power_loss=True)` is the machine losing power: only what was fsync'ed survives. That
  is the difference between a crashed program and a crashed computer, and why careful programs
  call fsync. (Tau's session log, at the commit the book pins, does not: its append opens the file,
  writes the line and closes it, src/tau_agent/session/storage.py:30-34. Its project-trust store
  does, src/tau_coding/project_trust.py:438-452.)
- `lab.power_cut()`, a step of the scripted model, cuts the whole machine: every Workspace that
  exists at that moment is off from then on, so a `finally` that tries to save on the way out
  writes nothing, as on a real machine. A disk from reboot() takes writes again.
- A fault plan, `Workspace(files, faults=cut(at_write=3, after_bytes=10))`, pulls the plug in the
  middle of the third write or append, after 10 bytes of it reached the disk, and raises PowerCut.
  It is how a torn write is made on purpose.

PowerCut derives from BaseException, not Exception: a program's `except Exception:` must not be
able to catch the end of the world, just as it cannot catch a real power cut.
"""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["PowerCut", "Cut", "cut", "Workspace", "CWD"]


class PowerCut(BaseException):
    """The power went out. Derives from BaseException so that no `except Exception` in the
    program under test can catch it: a dead process runs no handler and no last line. Only the
    stage, the cell around the program, catches it, to reboot and look at the disk."""


@dataclass(frozen=True)
class Cut:
    """A fault plan: the power goes out during write number `at_write` (writes and appends counted
    together from 1, or only those to `path` when it is given), once `after_bytes` bytes of its
    UTF-8 encoding, or the `fraction` of them rounded down, have reached the disk. Make one with
    cut()."""
    at_write: int
    after_bytes: int | None = None
    fraction: float | None = None
    path: str | None = None
    before: bool = False

    def bytes_for(self, size: int) -> int:
        """How many of `size` bytes reach the disk before the cut."""
        if self.after_bytes is not None:
            if self.after_bytes > size:
                raise ValueError(f"cut(at_write={self.at_write}, after_bytes={self.after_bytes}): "
                                 f"that write is only {size} bytes long")
            return self.after_bytes
        # Fraction(str(0.29)) is exactly 29/100, so 0.29 of 100 bytes is 29, not 28.
        share = Fraction(str(self.fraction)) if isinstance(self.fraction, float) else Fraction(self.fraction)
        return math.floor(size * share)


def cut(at_write: int, after_bytes: int | None = None, *, fraction: float | None = None,
        path: str | None = None, before: bool = False) -> Cut:
    """A fault plan for Workspace(faults=...): pull the plug during the `at_write`-th write or
    append (counted from 1 over both, or over those to `path` only), after `after_bytes` bytes of
    it, or `fraction` of its bytes (0.6: the first 60%, rounded down), reached the disk.
    after_bytes may be 0 (a write-over then leaves an empty file) up to the whole length (every
    byte arrived, and the power went before the call returned). before=True cuts just before
    that operation starts: nothing of it happens, not even the emptying of a write-over."""
    if before and (after_bytes is not None or fraction is not None):
        raise ValueError("cut(before=True) takes no after_bytes or fraction: nothing is written")
    if not before and (after_bytes is None) == (fraction is None):
        raise ValueError("cut() takes after_bytes or fraction, exactly one of them")
    if not isinstance(at_write, int) or at_write < 1:
        raise ValueError(f"cut(at_write={at_write!r}): writes are counted from 1")
    if after_bytes is not None and (not isinstance(after_bytes, int) or after_bytes < 0):
        raise ValueError(f"cut(after_bytes={after_bytes!r}): must be a whole number, 0 or more")
    if fraction is not None and not 0 <= fraction <= 1:
        raise ValueError(f"cut(fraction={fraction!r}): must be between 0 and 1")
    return Cut(at_write, after_bytes, fraction, None if path is None else _key(path), before)


_POWER = {"outages": 0, "last": ""}  # machine-wide cuts so far (lab.power_cut()), the last one's place


def power_out(where: str) -> None:
    """The whole machine loses its power (model.py's power_cut() step calls this): every
    Workspace that exists now is off, as its own fault plan would leave it, so a `finally` or an
    `except BaseException` that runs on the way out of PowerCut writes nothing. Only a disk from
    reboot(), or a Workspace made later, takes writes again."""
    _POWER["outages"] += 1
    _POWER["last"] = where


CWD = "/workspace"  # where the disk is, for a program that asks (Shell's pwd prints it)


def _key(path: str) -> str:
    """A path as the disk files it: "./a.py", "a.py" and "/workspace/a.py" are one file. The empty
    path names nothing: it never exists, and opening it is FileNotFoundError, as on a real disk."""
    if not isinstance(path, str):
        raise TypeError(f"a path must be a str, not {type(path).__name__}")
    if path == "":
        return ""
    key = posixpath.normpath(path)
    if key == CWD:
        return "."
    if key.startswith(CWD + "/"):
        return key[len(CWD) + 1:]
    return key


def _missing(path: str) -> FileNotFoundError:
    """The error a real open() raises, so tools that pass it on read the same here as at home."""
    return FileNotFoundError(2, "No such file or directory", path)


class Workspace:
    """The disk a lesson's tools work on: text files in memory, by path.

    Workspace(files=None, *, faults=None): `files` is a dict {path: text} to start from (it is
    copied, and counts as safely on the disk); `faults` is a plan made by cut().

    Two views of every file are kept. The file's text is what a reader sees: everything the
    program handed to the operating system. The durable text is what fsync(path) last forced to
    the platter. Creating, emptying, renaming and removing a file are durable at once (they are
    changes to names and sizes, which journaling file systems log); the bytes written into a file
    are durable only once fsync'ed. reboot() keeps the first view, reboot(power_loss=True) the
    second.

    A torn write keeps the first K bytes of the text's UTF-8 encoding. Text on this disk stays
    str, so those bytes are decoded with errors="replace": a character split by the cut becomes
    one U+FFFD (the replacement character), the way Python reads back a torn UTF-8 file with
    errors="replace". Damage stays visible and reading never crashes.

    After the fault plan has cut the power, every operation that would change the disk raises
    PowerCut again: the machine is off. Reading is still allowed, for the stage to look at the
    wreck; a program that wants to carry on must reboot().
    """

    def __init__(self, files: dict[str, str] | None = None, *, faults: Cut | None = None):
        self._files: dict[str, str] = {}
        for path, content in (files or {}).items():
            if not isinstance(content, str):
                raise TypeError(f"Workspace files: {path!r} must hold a str, not "
                                f"{type(content).__name__}")
            self._files[_key(path)] = content
        self._durable: dict[str, str] = dict(self._files)
        self.faults = faults
        self.writes: list[tuple[str, str, str]] = []
        self.cut_point: str | None = None  # once the fault plan has fired: where, in words
        self._counted = 0                   # writes and appends counted for the fault plan
        self._outages = _POWER["outages"]         # machine-wide cuts before this disk was made

    # -- reading ------------------------------------------------------------------------------

    def exists(self, path: str) -> bool:
        """True if `path` is a file, or a folder that holds one. Never creates anything."""
        key = _key(path)
        return key in self._files or self._is_dir(key)

    def _is_dir(self, key: str) -> bool:
        if key == "":
            return False
        if key == ".":
            return True
        prefix = key.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in self._files)

    def read_text(self, path: str) -> str:
        """The whole text of the file `path`. Raises FileNotFoundError if there is none, and
        IsADirectoryError for a folder. Never creates a file."""
        key = _key(path)
        if key in self._files:
            return self._files[key]
        if self._is_dir(key):
            raise IsADirectoryError(21, "Is a directory", path)
        raise _missing(path)

    def listdir(self, path: str = ".") -> list[str]:
        """The names directly inside the folder `path`, files and folders, sorted. Folders exist
        while they hold a file: this disk has no empty folders."""
        key = _key(path)
        if key in self._files:
            raise NotADirectoryError(20, "Not a directory", path)
        if not self._is_dir(key):
            raise _missing(path)
        prefix = "" if key == "." else key + "/"
        names = {p[len(prefix):].split("/", 1)[0] for p in self._files if p.startswith(prefix)}
        return sorted(names)

    @property
    def files(self) -> dict[str, str]:
        """A copy of the whole disk, {path: text}, sorted by path."""
        return {p: self._files[p] for p in sorted(self._files)}

    # -- writing ------------------------------------------------------------------------------

    @staticmethod
    def _check(data: object) -> None:
        if not isinstance(data, str):
            raise TypeError(f"data must be str, not {type(data).__name__}")

    def _alive(self) -> None:
        if self.cut_point is None and self._outages != _POWER["outages"]:
            self.cut_point = str(_POWER["last"])
        if self.cut_point is not None:
            raise PowerCut(f"the power is off ({self.cut_point}); reboot() to use the disk again")

    def _begin(self, op: str, key: str, data: object) -> int | None:
        """The checks every write and append starts with, and the fault plan's count. Returns
        how many bytes may reach the disk if the plan cuts this operation, else None. A plan
        with before=True cuts here, before the operation has done anything at all."""
        self._check(data)
        self._alive()
        if key == "":
            raise _missing(key)
        if self._is_dir(key):
            raise IsADirectoryError(21, "Is a directory", key)
        plan = self.faults
        if plan is None or (plan.path is not None and plan.path != key):
            return None
        self._counted += 1
        if self._counted != plan.at_write:
            return None
        if plan.before:
            self.cut_point = f"{op} {self._counted} ({key}), before it began"
            raise PowerCut(f"the power went out just before {op} {self._counted} ({key})")
        return plan.bytes_for(len(data.encode("utf-8")))  # type: ignore[union-attr]

    def _put(self, op: str, key: str, data: str, start: str, keep: int | None) -> int:
        """Put `data` after `start` into the file `key`, or, when the fault plan cuts this
        operation, only its first `keep` bytes, and then raise PowerCut. Records the operation
        with the text that reached the disk."""
        if keep is not None:
            raw = data.encode("utf-8")
            arrived = raw[:keep].decode("utf-8", errors="replace")
            self._files[key] = start + arrived
            self.writes.append((op, key, arrived))
            self.cut_point = f"{op} {self._counted} ({key}), after {keep} of {len(raw)} bytes"
            raise PowerCut(f"the power went out during {self.cut_point}")
        self._files[key] = start + data
        self.writes.append((op, key, data))
        return len(data)

    def write_text(self, path: str, data: str) -> int:
        """Replace the file `path` with `data`, creating it if need be; returns len(data).

        Two steps, as on a real disk: the file is emptied (durably: a truncate is logged), then
        the new text goes in. A power cut in the second step leaves an empty or half-written
        file, never the old one."""
        key = _key(path)
        keep = self._begin("write", key, data)
        self._files[key] = ""
        self._durable[key] = ""
        return self._put("write", key, data, "", keep)

    def append_text(self, path: str, data: str) -> int:
        """Add `data` to the end of the file `path`, creating it if need be; returns len(data).
        What was already in the file is never touched, so a cut can only hurt the new tail."""
        key = _key(path)
        keep = self._begin("append", key, data)
        if key not in self._files:
            self._files[key] = ""
            self._durable[key] = ""
        return self._put("append", key, data, self._files[key], keep)

    def rename(self, src: str, dst: str) -> None:
        """Move the file `src` to `dst`, replacing any file there, in one step that cannot tear
        (as os.replace). Recorded as ("rename", src, dst). The new name is durable at once, but it
        carries only what had been fsync'ed of `src`: rename a file you never fsync'ed, lose the
        power, and `dst` is there and empty."""
        s, d = _key(src), _key(dst)
        self._alive()
        if s not in self._files or d == "":
            raise _missing(src if s not in self._files else dst)
        self._files[d] = self._files.pop(s)
        self._durable[d] = self._durable.pop(s, "")
        self.writes.append(("rename", s, d))

    def remove(self, path: str) -> None:
        """Delete the file `path`, at once and durably. Recorded as ("remove", path, "")."""
        key = _key(path)
        self._alive()
        if key not in self._files:
            raise _missing(path)
        del self._files[key]
        self._durable.pop(key, None)
        self.writes.append(("remove", key, ""))

    def fsync(self, path: str) -> None:
        """Force the file `path` to the disk: everything in it now survives a power loss.
        Recorded as ("fsync", path, "")."""
        key = _key(path)
        self._alive()
        if key not in self._files:
            raise _missing(path)
        self._durable[key] = self._files[key]
        self.writes.append(("fsync", key, ""))

    # -- dying --------------------------------------------------------------------------------

    def reboot(self, power_loss: bool = False) -> "Workspace":
        """A new Workspace holding this disk as a dead process left it, with an empty `writes`
        and no fault plan. This object is left as it is: it is the old machine's view.

        reboot() is a process kill (kill -9, a crash, a power cut the disk controller rode out):
        every byte handed to the operating system survives, a torn write included.
        reboot(power_loss=True) is the machine losing power: each file keeps only what was last
        fsync'ed (files created but never fsync'ed are there, and empty). Deterministic: the
        unsynced tail is always lost, never sometimes."""
        new = Workspace()
        if power_loss:
            new._files = dict(self._durable)
        else:
            new._files = dict(self._files)
        new._durable = dict(self._durable)
        return new

    def __repr__(self) -> str:
        return f"Workspace({self.files!r})"


def read_tool(files: "dict[str, str] | Workspace") -> dict:
    """Lesson 2's hand-written `read` tool, for cells that need one and are about something else:
    the four keys of a tool, one string argument "path", and an execute that returns the file's
    whole text. `files` is a dict of path -> text (a missing path raises KeyError) or a Workspace
    (read_text: FileNotFoundError). The harness's own read tool, with a budget, is lesson 6's
    make_read_tool."""
    def execute(arguments: dict) -> str:
        path = arguments["path"]
        return files.read_text(path) if isinstance(files, Workspace) else files[path]
    return {"name": "read", "description": "Read a text file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            "execute": execute}
