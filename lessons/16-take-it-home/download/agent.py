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
Ctrl-C or a kill leaves a log that --resume replays. Standard library only.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import harness

LOG = ".agent/session.jsonl"        # inside the folder, and out of the tools' reach
WINDOW = 150_000                    # tokens the model reads, for the Session's compaction
RULES = ("Paths are relative to the working folder; you cannot leave it.",
         "Check your work by running it, and say briefly what you did.")
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1"}


class OutsideFolder(PermissionError):
    """A path that leads out of the folder the agent works in."""


class Folder:
    """A real folder with lab.Workspace's methods, so your tools run on it unchanged. Every path
    is taken relative to `root` and refused if it resolves outside it (../, an absolute path, a
    symbolic link out) or into .agent/, where the session lives. Appends are flushed and fsync'ed:
    a line of the log that was written survives a kill, and a power cut."""

    def __init__(self, root, private=(".agent",)):
        self.root, self.private = Path(root).resolve(), tuple(private)

    def _path(self, path):
        full = (self.root / path).resolve()
        if full != self.root and self.root not in full.parents:
            raise OutsideFolder(f"{path} is outside the folder {self.root}; the tools work only "
                                "inside it")
        parts = full.relative_to(self.root).parts
        if parts and parts[0] in self.private:
            raise OutsideFolder(f"{path} is the agent's own record, not a file to work on")
        return full

    def exists(self, path):
        return self._path(path).exists()

    def read_text(self, path):
        return self._path(path).read_text(encoding="utf-8")

    def write_text(self, path, text):
        full = self._path(path)
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text, encoding="utf-8")

    def append_text(self, path, text):
        full = self._path(path)
        full.parent.mkdir(parents=True, exist_ok=True)
        with open(full, "a", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())

    def listdir(self, path="."):
        return sorted(p.name for p in self._path(path).iterdir()
                      if p.name not in self.private)


class Shell:
    """lab.Shell's interface over a real shell: run(command) -> (output, exit_code), stdout and
    stderr together, run in the folder. A command can still reach outside the folder (cd .., an
    absolute path): that is why every command is asked about first."""

    def __init__(self, root, timeout=300):
        self.root, self.timeout = Path(root).resolve(), timeout

    def run(self, command):
        try:
            done = subprocess.run(command, shell=True, cwd=self.root, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=self.timeout)
        except subprocess.TimeoutExpired as expired:
            output = (expired.stdout or b"").decode("utf-8", "replace")
            return output + f"\n[timed out after {self.timeout} s]\n", 124
        return done.stdout.decode("utf-8", "replace"), done.returncode


def asker(always_yes, stdin=sys.stdin, out=sys.stderr):
    """ask(name, arguments) -> bool for harness.ask_first: a y/N question on the terminal. An
    empty answer, or no terminal left to answer (end of input), is a no."""
    def ask(name, arguments):
        shown = json.dumps(arguments, ensure_ascii=False)
        if len(shown) > 400:
            shown = shown[:400] + f"... ({len(shown)} characters)"
        print(f"\n? {name} {shown}", file=out)
        if always_yes:
            print("  allowed (--yes)", file=out)
            return True
        print("  allow it? [y/N] ", end="", file=out, flush=True)
        answer = stdin.readline()
        return answer.strip().lower() in ("y", "yes")
    return ask


def make_model(args, environ=os.environ):
    """The provider's adapter from your harness. A key is needed only for the provider's own
    address; a --base-url of your own (a local server) may need none."""
    key_env = "ANTHROPIC_API_KEY" if args.provider == "anthropic" else "OPENAI_API_KEY"
    if not args.base_url and not environ.get(key_env):
        sys.exit(f"agent.py: set {key_env} (or give --base-url for a local server)")
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
    first line of its result. A streamed text is printed once, piece by piece."""

    def __init__(self, out=sys.stdout):
        self.out, self.open = out, False

    def __call__(self, event):
        out = self.out
        if event["type"] == "compaction":
            print(f"[compacted the session: {event['reason']}]", file=out, flush=True)
        if event["type"] == "message_update" and event["piece"]["type"] == "text":
            print(event["piece"]["text"], end="", file=out, flush=True)
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
                print(harness.text_of(message), file=out, flush=True)
            if message.get("stop_reason") == "error":
                print(f"[failed: {message.get('error_message')}]", file=out, flush=True)
            for call in harness.tool_calls(message):
                print(f"-> {call['name']} "
                      f"{json.dumps(call['arguments'], ensure_ascii=False)[:200]}",
                      file=out, flush=True)
        elif message["role"] == "toolResult":
            first = (message["content"].splitlines() or [""])[0][:200]
            mark = " [error]" if message["is_error"] else ""
            print(f"   {first}{mark}", file=out, flush=True)


async def consume(run, show):
    """Your harness's run to its end (async from lesson 15). A Ctrl-C cancels this task: the
    harness's finally gives each cut call its result and tells the saver, so the log stays whole."""
    async for event in run:
        show(event)


def parse(argv):
    parser = argparse.ArgumentParser(
        description="Run your harness against a real model, in one folder of this machine.")
    parser.add_argument("prompt", nargs="?", help="what to do (optional with --resume)")
    parser.add_argument("--provider", choices=["anthropic", "openai"], default="anthropic")
    parser.add_argument("--base-url", help="the API's address, e.g. http://localhost:11434/v1")
    parser.add_argument("--model", help="the model's name (default: a current one per provider)")
    parser.add_argument("--folder", default=".", help="the folder the tools work in (default .)")
    parser.add_argument("--resume", action="store_true",
                        help=f"carry on from the session in FOLDER/{LOG}")
    parser.add_argument("--yes", action="store_true", help="allow every call without asking")
    parser.add_argument("--allow", default="read",
                        help="tools that never ask, comma-separated (default: read)")
    parser.add_argument("--max-turns", type=int, default=50)
    parser.add_argument("--window", type=int, default=WINDOW,
                        help=f"tokens the model reads (default {WINDOW}; a local model: less)")
    args = parser.parse_args(argv)
    if not args.prompt and not args.resume:
        parser.error("say what to do, or --resume")
    return args


def main(argv=None):
    args = parse(argv)
    root = Path(args.folder).resolve()
    folder, record = Folder(root), Folder(root, private=())
    log = harness.SessionLog(record, LOG)
    if log.entries() and not args.resume:
        sys.exit(f"agent.py: a session is already in {root / LOG}: add --resume to carry on "
                 "with it, or delete the file to start afresh")
    tools = [harness.make_read_tool(folder), harness.make_write_tool(folder),
             harness.make_bash_tool(Shell(root))]
    tools = harness.ask_first(tools, asker(args.yes),
                              allow=tuple(a for a in args.allow.split(",") if a))
    model = make_model(args)
    system = lambda: harness.build_system_prompt(tools, folder, ".", Today(),  # noqa: E731
                                                 guidelines=RULES)
    print(f"[{model!r}, folder {root}, log {LOG}]", file=sys.stderr)
    try:
        if args.prompt:
            session = harness.Session(model, system, tools, log, window=args.window,
                                      max_turns=args.max_turns)
            run = session.prompt(args.prompt)
        else:                         # the record as it stands, sent again: no new message
            h = harness.Harness(model, system(), tools, messages=log.replay(),
                                max_turns=args.max_turns)
            h.subscribe(harness.persist_to(log))
            run = h.prompt(None)
        asyncio.run(consume(run, Show()))
    except KeyboardInterrupt:
        print(f"\n[stopped: the session is in {root / LOG}; python agent.py --resume carries "
              "on]", file=sys.stderr)
        return 130
    messages = log.replay()
    failed = bool(messages) and messages[-1].get("stop_reason") == "error"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
