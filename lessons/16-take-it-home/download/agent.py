"""Your harness, a real model, this folder: a working agent.

    python agent.py "fix the failing test"                       Anthropic, key in ANTHROPIC_API_KEY
    python agent.py --provider openai "fix the failing test"     OpenAI, key in OPENAI_API_KEY
    python agent.py --provider openai --base-url http://localhost:11434/v1 --model qwen3 "..."
                                                                 a local server (Ollama): no key
    python agent.py --resume                                     carry on after Ctrl-C or a crash
    python agent.py --resume "now run the linter too"            carry on with a new prompt

Everything that thinks is in harness.py, the file you wrote in the labs: the loop, the Harness,
the log, the tools, and the adapters of the closing page. This file only puts it on a real disk:
a folder the tools may not leave, a shell that runs real commands, a question before every call
that changes something, and the session saved line by line in .agent/session.jsonl, so that a
Ctrl-C or a kill leaves a log that --resume replays. Standard library only; Python 3.10 or newer.

Ctrl-C stops at once, wherever it lands: while the provider is answering, at a y/N question, or
while a command runs (the command and everything it started are stopped). A call it cut gets
lesson 10's INTERRUPTED result in the log, and no request goes out after it. A kill (SIGTERM)
or a closed terminal window (SIGHUP) stops it the same way.
"""
from __future__ import annotations

import signal
import sys

if __name__ == "__main__":   # a Ctrl-C while the imports below run: stop quietly, nothing is written
    signal.signal(signal.SIGINT, lambda signum, frame: sys.exit(130))

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import shlex
import shutil
import subprocess
import threading
import traceback
import unicodedata
from pathlib import Path

PRIVATE = ".agent"                  # the agent's own folder, inside the project folder
LOG = f"{PRIVATE}/session.jsonl"    # out of the tools' reach, and put back if a command changes it
WINDOW = 150_000                    # tokens the model reads, for the Session's compaction
TIMEOUT = 300                       # seconds a command may run (--timeout)
KEEP = 1_000_000                    # bytes of a command's output kept, the last ones
RULES = ("Paths are relative to the working folder. read and write cannot leave it; a command "
         "can, so keep your commands inside it too.",
         "Check your work by running it, and say briefly what you did.")
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1"}
KEY_ENVS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
CARRY_ON = "Your last reply was cut off before it ended. Carry on from where it stopped."
# What agent.py calls in your harness: the closing page's labs 1 to 3 give the last of them.
NEEDED = ("ask_first", "Session", "Harness", "SessionLog", "persist_to", "context_for_model",
          "make_read_tool", "make_write_tool", "make_bash_tool", "build_system_prompt",
          "AnthropicModel", "OpenAIModel", "text_of", "tool_calls", "INTERRUPTED",
          "estimate_tokens", "user_message", "compact", "is_overflow", "RESERVE", "KEEP_RECENT")

harness = None                      # your harness.py, imported by load_harness()


class Stop(Exception):
    """Bad input or a broken state: a sentence for the user, and an exit code."""

    def __init__(self, words, code=1):
        super().__init__(words)
        self.code = code


# -- the terminal ---------------------------------------------------------------------------------

def printable(text, keep="\n\t"):
    r"""`text` safe for a terminal: every character that is not printable (an escape sequence's
    ESC, a carriage return, a right-to-left override) is written as Python spells it, \x1b,
    \r, \u202e, so a file or a model cannot redraw the screen or reverse what you read."""
    return "".join(ch if ch in keep or ch.isprintable() or unicodedata.category(ch) == "Zs"
                   else ch.encode("unicode_escape").decode("ascii") for ch in text)


class Stopped(KeyboardInterrupt):
    """A SIGTERM (kill PID) or a SIGHUP (the terminal window closed): stopped as a Ctrl-C is."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


# Ctrl-C, kill PID, the terminal closed (the last two are not on Windows).
SIGNALS = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
           if hasattr(signal, name)]


class Interrupts:
    """Ctrl-C raises KeyboardInterrupt at once, wherever the program is: in a read from the
    provider, at the y/N question, while a command runs. A SIGTERM or a SIGHUP raises Stopped, a
    KeyboardInterrupt too, so that a kill or a closed terminal stops the command as well. Only the
    writing of one log line holds them (`with interrupts.held():`), so that no line is ever cut in
    two; the signal is raised right after."""

    def __init__(self):
        self.holding, self.pending = 0, None

    def install(self):
        # Not signal.default_int_handler: asyncio.run (3.11+) leaves a handler of our own alone,
        # where it would turn its default into a cancel that waits for the next await.
        for signum in SIGNALS:
            signal.signal(signum, self.handler)

    def ignore(self):
        """From now on the program finishes what it writes: every signal above is ignored."""
        for signum in SIGNALS:
            signal.signal(signum, signal.SIG_IGN)

    def handler(self, signum, frame):
        if self.holding:
            self.pending = signum
            return
        raise interruption(signum)

    @contextlib.contextmanager
    def held(self):
        self.holding += 1
        try:
            yield
        finally:
            self.holding -= 1
            if not self.holding and self.pending is not None:
                signum, self.pending = self.pending, None
                raise interruption(signum)


def interruption(signum):
    return KeyboardInterrupt() if signum == signal.SIGINT else Stopped(signum)


def exit_code(interrupt):
    """128 + the signal, as a shell reports a program a signal stopped: 130 for Ctrl-C."""
    return 128 + getattr(interrupt, "signum", signal.SIGINT)


INTERRUPTS = Interrupts()


# -- the folder -----------------------------------------------------------------------------------

class OutsideFolder(PermissionError):
    """A path that leads out of the folder the agent works in."""


class Folder:
    """A real folder with lab.Workspace's methods, so your tools run on it unchanged. Every path
    is taken relative to `root` and refused if it resolves outside it (../, an absolute path, a
    symbolic link out) or into .agent/, where the session lives (in any case of letters: on a
    file system that ignores case, .AGENT is .agent). A write goes to a new file that then takes
    the old one's place, so a kill never leaves half a file. An append is one write to the
    operating system, which a Ctrl-C waits for, so a kill never leaves half a line; the fsync
    after it is for a power cut (lesson 11)."""

    def __init__(self, root, private=(PRIVATE,)):
        self.root = Path(root).resolve()
        self.private = tuple(name.casefold() for name in private)

    def _path(self, path):
        full = (self.root / path).resolve()
        if full != self.root and self.root not in full.parents:
            raise OutsideFolder(f"{path} is outside the folder {self.root}; the tools work only "
                                "inside it")
        parts = full.relative_to(self.root).parts
        if parts and parts[0].casefold() in self.private:
            raise OutsideFolder(f"{path} is the agent's own record, not a file to work on")
        return full

    def exists(self, path):
        return self._path(path).exists()

    def read_text(self, path):
        return self._path(path).read_text(encoding="utf-8")

    def write_text(self, path, text):
        full = self._path(path)
        full.parent.mkdir(parents=True, exist_ok=True)
        replace(full, text.encode("utf-8"))

    def append_text(self, path, text):
        full = self._path(path)
        full.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        with INTERRUPTS.held():
            fd = os.open(full, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                while data:                     # one write, for a file on disk
                    data = data[os.write(fd, data):]
                os.fsync(fd)
            finally:
                os.close(fd)

    def listdir(self, path="."):
        return sorted(p.name for p in self._path(path).iterdir()
                      if p.name.casefold() not in self.private)


def replace(path, data):
    """Write `data` to `path` at once or not at all: a new file beside it, renamed over it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if path.is_file():
            shutil.copymode(path, tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


# -- the shell ------------------------------------------------------------------------------------

def command_environment(environ, secrets=()):
    """The environment a command runs in: this one without any provider key. Every variable whose
    name ends in _API_KEY goes, and any other that holds one of `secrets` (the key in use)."""
    secrets = {s for s in secrets if s}
    return {name: value for name, value in environ.items()
            if not name.upper().endswith("_API_KEY") and value not in secrets}


class Shell:
    """lab.Shell's interface over a real shell: run(command) -> (output, exit_code), stdout and
    stderr together, run in the folder.

    - A command runs without the provider keys in its environment, so `env` cannot print one.
    - It runs in a process group of its own. When it ends, on its own, at the time-out or at a
      Ctrl-C (a kill, a closed terminal), the whole group is stopped: nothing it started in the
      background keeps running. Only a SIGKILL of agent.py, which no program can catch, leaves
      the command running.
    - Its output is read as it comes and only the last `keep` bytes are kept.
    - .agent/ is read before and after: a command that changed it (the log, a command can reach
      it) has it put back as it was, and its result says so.
    A command can still reach outside the folder (cd .., an absolute path): that is why every
    command is asked about first."""

    def __init__(self, root, timeout=TIMEOUT, keep=KEEP, environ=os.environ, secrets=()):
        self.root, self.timeout, self.keep = Path(root).resolve(), timeout, keep
        self.environ, self.secrets = environ, secrets

    def run(self, command):
        before = self._private()
        try:
            output, code = self._run(command)
        finally:
            changed = self._private() != before
            if changed:
                self._put_back(before)
        if changed:
            output += (f"\n[agent.py: the command changed {PRIVATE}/, the agent's own record; "
                       "it was put back as it was]")
        return output, code

    def _run(self, command):
        tail, process, timed_out = Tail(self.keep), None, False
        try:
            # A signal that lands while the command starts is held until `process` is known, and
            # raised at the end of this block: inside the try, so the command still goes with us.
            with INTERRUPTS.held():
                process = subprocess.Popen(
                    command, shell=True, cwd=self.root, stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                    env=command_environment(self.environ, self.secrets))
                reader = threading.Thread(target=tail.drain, args=(process.stdout,), daemon=True)
                reader.start()
            try:
                process.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            left = _stop_group(process)
            reader.join(2)
            code = process.wait()
        except BaseException:                 # Ctrl-C: the command goes with us
            if process is not None:
                _stop_group(process)
            raise
        output = tail.text()
        if timed_out:
            return output + (f"\n[timed out after {self.timeout:g} s: the command and everything "
                             "it started were stopped]"), 124
        if left:
            output += ("\n[agent.py: the command left processes running in the background; they "
                       "were stopped]")
        return output, code

    def _private(self):
        """What .agent/ holds: {name: bytes} of its plain files, or a word for anything else."""
        folder = self.root / PRIVATE
        if folder.is_symlink() or not folder.is_dir():
            return "missing" if not folder.exists() and not folder.is_symlink() else "not a folder"
        return {p.name: (p.read_bytes() if p.is_file() and not p.is_symlink() else "not a file")
                for p in sorted(folder.iterdir())}

    def _put_back(self, before):
        folder = self.root / PRIVATE
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            folder.unlink()
        if not isinstance(before, dict):
            if folder.is_dir():
                shutil.rmtree(folder)
            return
        folder.mkdir(exist_ok=True)
        for path in folder.iterdir():
            if path.name not in before or path.is_symlink() or not path.is_file():
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        for name, data in before.items():
            if isinstance(data, bytes) and (not (folder / name).is_file()
                                            or (folder / name).read_bytes() != data):
                replace(folder / name, data)


def _stop_group(process):
    """Kill the command's process group; True if anything of it was still running."""
    if hasattr(os, "killpg"):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    if process.poll() is None:           # no process groups (Windows): the shell at least
        process.kill()
        return True
    return False


class Tail:
    """The last `keep` bytes of a pipe, read in pieces as they come: a command that prints
    gigabytes costs a bounded amount of memory."""

    def __init__(self, keep):
        self.keep, self.data, self.total = keep, bytearray(), 0

    def drain(self, pipe):
        with pipe:
            while True:
                chunk = os.read(pipe.fileno(), 65536)
                if not chunk:
                    break
                self.total += len(chunk)
                self.data += chunk
                if len(self.data) > 2 * self.keep:
                    del self.data[:-self.keep]

    def text(self):
        data = bytes(self.data[-self.keep:])
        text = data.decode("utf-8", "replace")
        if self.total > len(data):
            text = text.partition("\n")[2]     # from the first whole line kept
            text += (f"\n[agent.py: the command printed {self.total} bytes; only the last "
                     f"{len(data)} were kept]")
        return text


# -- the question ---------------------------------------------------------------------------------

def question(name, arguments):
    """What a call will do, whole and escaped: each argument on its own, a text line by line."""
    lines = [f"? {printable(name, keep='')}"]
    for key, value in (arguments.items() if isinstance(arguments, dict) else [("", arguments)]):
        label = printable(str(key), keep="")
        if isinstance(value, str):
            lines.append(f"  {label}:")
            lines += [f"    | {printable(line, keep='')}" for line in value.split("\n")]
        else:
            lines.append(f"  {label}: {printable(json.dumps(value), keep='')}")
    return "\n".join(lines)


def asker(always_yes, stdin=sys.stdin, out=sys.stderr):
    """ask(name, arguments) -> bool for harness.ask_first: a y/N question on the terminal, after
    the whole of what would run. An empty answer, or no terminal left to answer (end of input), is
    a no. A Ctrl-C here stops the run, like anywhere else."""
    def ask(name, arguments):
        print("\n" + question(name, arguments), file=out)
        if always_yes:
            print("  allowed (--yes)", file=out)
            return True
        print("  allow it? [y/N] ", end="", file=out, flush=True)
        answer = stdin.readline()
        return answer.strip().lower() in ("y", "yes")
    return ask


# -- the model ------------------------------------------------------------------------------------

def make_model(args, environ=os.environ):
    """The provider's adapter from your harness. A key is needed only for the provider's own
    address; a --base-url of your own (a local server) may need none."""
    key_env = KEY_ENVS[args.provider]
    if not args.base_url and not environ.get(key_env):
        raise Stop(f"agent.py: set {key_env} (or give --base-url for a local server)")
    options = {"base_url": args.base_url} if args.base_url else {}
    model = args.model or DEFAULT_MODELS[args.provider]
    if args.provider == "anthropic":
        return harness.AnthropicModel(model, **options)
    return harness.OpenAIModel(model, **options)


class Today:
    """The machine's clock, for lesson 13's build_system_prompt: today's date, asked each time."""

    def today(self):
        return datetime.date.today()


class Show:
    """A plain frontend: the model's words as they arrive (lesson 14), each call it makes and the
    first line of its result. A streamed text is printed once, piece by piece. Nothing reaches the
    terminal unescaped."""

    def __init__(self, out=sys.stdout):
        self.out, self.open = out, False

    def __call__(self, event):
        out = self.out
        if event["type"] == "compaction":
            print(f"[compacted the session: {event['reason']}]", file=out, flush=True)
        if event["type"] == "message_update" and event["piece"]["type"] == "text":
            print(printable(event["piece"]["text"]), end="", file=out, flush=True)
            self.open = True
        if event["type"] == "message_end":
            self.end(event["message"])

    def end(self, message):
        out = self.out
        if message["role"] == "assistant":
            if self.open:
                print(file=out, flush=True)
                self.open = False
            elif harness.text_of(message):
                print(printable(harness.text_of(message)), file=out, flush=True)
            if message.get("stop_reason") == "error":
                print(f"[failed: {printable(str(message.get('error_message')))}]", file=out,
                      flush=True)
            for call in harness.tool_calls(message):
                shown = json.dumps(call["arguments"], ensure_ascii=False)[:200]
                print(f"-> {printable(call['name'], keep='')} {printable(shown, keep='')}",
                      file=out, flush=True)
        elif message["role"] == "toolResult":
            first = (str(message["content"]).splitlines() or [""])[0][:200]
            mark = " [error]" if message["is_error"] else ""
            print(f"   {printable(first, keep='')}{mark}", file=out, flush=True)


async def consume(run, show):
    """Your harness's run to its end (async from lesson 15)."""
    async for event in run:
        show(event)


async def ask_again(model, system, tools, log, *, window, max_turns):
    """--resume with no prompt: lesson 12's prompt(None) on the record as it stands. A Session
    prompts only with words, so this takes the Session's steps itself: it compacts first when
    the estimate says the request will not fit, and after a refusal for length it compacts once
    and asks once more."""
    if (harness.estimate_tokens([harness.user_message(system)] + log.replay())
            > window - harness.RESERVE and harness.compact(log, model, harness.KEEP_RECENT)):
        yield {"type": "compaction", "reason": "threshold"}
    for attempt in (1, 2):
        h = harness.Harness(model, system, tools, messages=log.replay(), max_turns=max_turns)
        h.subscribe(harness.persist_to(log))
        async for event in h.prompt(None):
            yield event
        if not (attempt == 1 and h.messages and harness.is_overflow(h.messages[-1])
                and harness.compact(log, model, harness.KEEP_RECENT)):
            return
        yield {"type": "compaction", "reason": "overflow"}


# -- the session ----------------------------------------------------------------------------------

def check_log(path):
    """Raise Stop if the log has a line that is not a whole entry: a torn last line (a write cut
    short by a power cut), or a line a person or a program put there."""
    if not path.exists():
        return
    if not path.is_file():
        raise Stop(f"agent.py: {path} is not a file; move it away to start afresh")
    lines = path.read_bytes().split(b"\n")
    torn = lines[-1] != b""            # the last line has no newline: it was cut short
    if not torn:
        lines.pop()
    for number, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
            whole = isinstance(entry, dict) and entry.get("type") in ("message", "compaction")
        except ValueError:
            whole = False
        if not whole or (torn and number == len(lines)):
            raise Stop(f"agent.py: {path}, line {number} of {len(lines)}, is not a whole log entry "
                       "(a write cut short, or an edit). Nothing was sent. "
                       f"python agent.py --folder {shlex.quote(str(path.parent.parent))} "
                       f"--repair-log keeps the {number - 1} whole lines before it and moves the "
                       "old file aside; or move the file away to start afresh.")


def repair_log(path):
    """Keep the whole lines before the first broken one; the old file is kept beside it."""
    lines = path.read_bytes().split(b"\n")
    lines.pop()                         # after the last newline: empty, or a line cut short
    kept = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            break
        if not (isinstance(entry, dict) and entry.get("type") in ("message", "compaction")):
            break
        kept.append(line)
    n = 1
    while path.with_name(f"{path.name}.broken-{n}").exists():
        n += 1
    aside = path.with_name(f"{path.name}.broken-{n}")
    shutil.copy2(path, aside)
    replace(path, b"".join(line + b"\n" for line in kept))
    return len(kept), aside


def close_calls(log):
    """After a Ctrl-C: every call in the log without a result gets INTERRUPTED (lesson 10's words),
    written to the log. Harness.cancel's repair says CANCELLED for a call whose tool never started;
    the log cannot tell which had, so each may have run. Returns the names of the calls closed."""
    messages = log.replay()
    answered = {m["tool_call_id"] for m in messages if m["role"] == "toolResult"}
    closed = []
    for message in messages:
        for call in harness.tool_calls(message) if message["role"] == "assistant" else []:
            if call["id"] not in answered:
                answered.add(call["id"])
                log.append_message({"role": "toolResult", "tool_call_id": call["id"],
                                    "tool_name": call["name"], "content": harness.INTERRUPTED,
                                    "is_error": True})
                closed.append(call["name"])
    return closed


def load_harness():
    """import harness (the harness.py beside agent.py), or Stop with what is wrong with it."""
    global harness
    here = Path(__file__).resolve().parent
    try:
        import harness as module
    except ModuleNotFoundError as error:
        if error.name != "harness":
            raise Stop(f"agent.py: harness.py imports {error.name}, which is not installed "
                       "here; agent.py needs the standard library only") from None
        raise Stop(f"agent.py: there is no harness.py beside agent.py (in {here}). Put the "
                   "harness.py you finished in lab 16.4 there.") from None
    except SyntaxError as error:
        raise Stop(f"agent.py: harness.py, line {error.lineno}: {error.msg}. Fix it (the lab's "
                   "tests show where) and start again.") from None
    except Exception as error:     # the reader's code, run at import: say where, not a traceback
        raise Stop(f"agent.py: harness.py could not be imported: {where(error)}") from None
    missing = [name for name in NEEDED if not hasattr(module, name)]
    missing += [f"HttpModel.{name}" for name in ("complete", "stream")
                if hasattr(module, "AnthropicModel") and not hasattr(module.AnthropicModel, name)]
    if missing:
        raise Stop(f"agent.py: harness.py has no {', '.join(missing[:3])}: it is not yet the "
                   "closing page's harness. Finish lab 16.4 first (its tests all pass), and put "
                   "that harness.py beside agent.py.")
    harness = module
    return module


def where(error):
    """`error` in one line, with the line of harness.py (or of agent.py) it was raised on."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if Path(f.filename).name in ("harness.py", "agent.py")]
    place = f"{Path(frames[-1].filename).name}, line {frames[-1].lineno}: " if frames else ""
    return f"{place}{type(error).__name__}: {error}"


def resume_hint(args):
    """The command that carries this session on."""
    words = ["python", "agent.py"]
    if args.provider != "anthropic":
        words += ["--provider", args.provider]
    for flag, value in (("--base-url", args.base_url), ("--model", args.model)):
        if value:
            words += [flag, value]
    if args.folder != ".":
        words += ["--folder", args.folder]
    return " ".join(shlex.quote(w) for w in words + ["--resume"])


def parse(argv):
    parser = argparse.ArgumentParser(
        description="Run your harness against a real model, in one folder of this machine.")
    parser.add_argument("prompt", nargs="?", help="what to do (optional with --resume)")
    parser.add_argument("--provider", choices=["anthropic", "openai"], default="anthropic")
    parser.add_argument("--base-url", help="the API's address, e.g. http://localhost:11434/v1")
    parser.add_argument("--model", help="the model's name (default: a current one per provider)")
    parser.add_argument("--folder", default=".",
                        help="the folder the tools work in; it must exist (default .)")
    parser.add_argument("--resume", action="store_true",
                        help=f"carry on from the session in FOLDER/{LOG}")
    parser.add_argument("--repair-log", action="store_true",
                        help="keep the whole lines of a log that has a broken one, and stop")
    parser.add_argument("--yes", action="store_true", help="allow every call without asking")
    parser.add_argument("--allow", default="read",
                        help="tools that never ask, comma-separated (default: read)")
    parser.add_argument("--max-turns", type=int, default=50,
                        help="model calls a prompt may make (default 50)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT,
                        help=f"seconds a command may run (default {TIMEOUT})")
    parser.add_argument("--window", type=int, default=WINDOW,
                        help=f"tokens the model reads (default {WINDOW}; a local model: less)")
    args = parser.parse_args(argv)
    if not args.prompt and not args.resume and not args.repair_log:
        parser.error("say what to do, or --resume")
    if args.max_turns < 1:
        parser.error(f"--max-turns must be 1 or more, not {args.max_turns}")
    if not args.timeout > 0:
        parser.error(f"--timeout must be more than 0 seconds, not {args.timeout:g}")
    if args.window < 1:
        parser.error(f"--window must be 1 or more, not {args.window}")
    unknown = [a for a in args.allow.split(",") if a and a not in ("read", "write", "bash")]
    if unknown:
        parser.error(f"--allow: no tool is called {', '.join(unknown)} (read, write, bash)")
    return args


def say(words):
    """A line on stderr, if there is still a terminal to take it (after a SIGHUP there is not)."""
    try:
        print(words, file=sys.stderr, flush=True)
    except OSError:
        pass


def main(argv=None):
    INTERRUPTS.install()
    try:
        args = parse(argv)
        return start(args)
    except Stop as stop:
        print(stop, file=sys.stderr)
        return stop.code
    except KeyboardInterrupt as interrupt:   # before the run began: nothing written or sent
        say("\n[stopped before the run began]")
        return exit_code(interrupt)


def start(args):
    """Everything that can be refused is checked before anything is written or sent."""
    root = Path(args.folder).expanduser()
    if not root.exists():
        raise Stop(f"agent.py: --folder {args.folder}: no such folder. Create it first; agent.py "
                   "does not, so that a mistyped name is not a new, empty project.", 2)
    if not root.is_dir():
        raise Stop(f"agent.py: --folder {args.folder} is a file, not a folder", 2)
    root = root.resolve()
    path = root / LOG
    if args.repair_log:
        if not path.is_file():
            raise Stop(f"agent.py: there is no log at {path} to repair", 2)
        kept, aside = repair_log(path)
        print(f"agent.py: kept the {kept} whole lines of {path}; the old file is {aside}. "
              f"To carry on: {resume_hint(args)}", file=sys.stderr)
        return 0
    check_log(path)
    load_harness()
    folder, record = Folder(root), Folder(root, private=())
    log = harness.SessionLog(record, LOG)
    try:
        record_now = log.replay()
    except (ValueError, KeyError, TypeError, IndexError) as error:
        raise Stop(f"agent.py: {path} cannot be read as a session ({where(error)}). Move it "
                   "away to start afresh.") from None
    if record_now and not args.resume:
        raise Stop(f"agent.py: a session is already in {path}: add --resume to carry on "
                   "with it, or delete the file to start afresh")
    prompt = args.prompt
    if args.resume and not prompt:
        view = harness.context_for_model(record_now)
        if not view:
            raise Stop(f"agent.py: --resume: there is no session in {path} to carry on. Start "
                       "one with a prompt: python agent.py \"...\"", 2)
        last = view[-1]
        if last["role"] == "assistant" and last.get("stop_reason") == "error":
            prompt = CARRY_ON          # never a trailing assistant turn: that is a prefill
        elif last["role"] == "assistant":
            raise Stop(f"agent.py: the session in {path} ended with the model's answer. Say "
                       "what to do next: python agent.py --resume \"...\"", 2)
    model = make_model(args)
    secrets = [os.environ.get(name) for name in KEY_ENVS.values()]
    tools = [harness.make_read_tool(folder), harness.make_write_tool(folder),
             harness.make_bash_tool(Shell(root, timeout=args.timeout, secrets=secrets))]
    tools = harness.ask_first(tools, asker(args.yes),
                              allow=tuple(a for a in args.allow.split(",") if a))

    def system():
        text = harness.build_system_prompt(tools, folder, ".", Today(), guidelines=RULES)
        head, found, tail = text.rpartition("Working folder: /workspace")
        return head + f"Working folder: {root}" + tail if found else \
            text + f"\nWorking folder: {root}"

    try:
        (root / PRIVATE).mkdir(exist_ok=True)
        if not (root / PRIVATE / ".gitignore").exists():  # git add -A, git clean: not the session
            replace(root / PRIVATE / ".gitignore", b"*\n")
    except OSError as error:
        raise Stop(f"agent.py: cannot keep the session in {root / PRIVATE}: {error}") from None
    print(f"[{model!r}, folder {root}, log {LOG}]", file=sys.stderr)
    try:
        if prompt:
            session = harness.Session(model, system, tools, log, window=args.window,
                                      max_turns=args.max_turns)
            run = session.prompt(prompt)
        else:                         # the record ends where the model owes an answer: ask again
            run = ask_again(model, system(), tools, log, window=args.window,
                            max_turns=args.max_turns)
        asyncio.run(consume(run, Show()))
    except KeyboardInterrupt as interrupt:
        INTERRUPTS.ignore()                            # the last lines are written whole
        closed = close_calls(log)
        cut = f" ({', '.join(closed)} cut short: INTERRUPTED in the log)" if closed else ""
        say(f"\n[stopped{cut}. The session is in {path}; to carry on: {resume_hint(args)}]")
        return exit_code(interrupt)
    except Exception as error:    # the reader's harness, or the disk: a sentence, not a traceback
        print(f"\n[agent.py: the run stopped: {printable(where(error))}. The session is in "
              f"{path}; to carry on once it is fixed: {resume_hint(args)}]", file=sys.stderr)
        return 1
    messages = log.replay()
    if messages and messages[-1].get("stop_reason") == "error":
        print(f"[the run failed; to try again from here: {resume_hint(args)}]", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
