"""A model whose context window is full, and a model that summarises.

Lesson 12's props. A real model reads a bounded number of tokens per request, its context window.
Send more and the provider refuses the request: the reply comes back failed, and its words say
why. `WindowedModel` is a ScriptedModel with such a window. It counts every request the way the
provider would (`request_tokens`: the same count a reply's usage["input"] reports), and a request
over the window gets back a failed reply worded the way real providers word it, using up no step:

    400 prompt is too long: 9120 tokens > 8000 maximum

`summariser()` is a step for a model asked, with no tools, to summarise the conversation it is
sent. It has no memory and no knowledge of the task: each section of its summary is read out of
the messages of that one request, so a conversation cut in a bad place gives a summary that says
so. Offered tools, it does what a model mid-task tends to do: it carries on the work instead, and
its reply holds a tool call and no summary at all.

Standard library only; deterministic in CPython and Pyodide.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable

from .messages import call, provider_error, reply, say
from .model import Request, ScriptedModel, usage
from .model import forever as _forever

__all__ = ["WindowedModel", "request_tokens", "summariser", "SUMMARY_PREFIX", "renamer",
           "RENAME_NAMES", "RENAME_FILES", "RENAME_TASK", "rename_session"]

SUMMARY_PREFIX = "Previous conversation summary:\n"   # how a summary comes back into a transcript


def request_tokens(request: Request) -> int:
    """What the provider counts for `request`: system, messages and tools, all of it. The same
    number a reply's usage["input"] carries (lab.usage)."""
    return usage(request, {"content": []})["input"]


class WindowedModel(ScriptedModel):
    """ScriptedModel(steps) with a context window of `window` tokens.

    A request whose count (request_tokens) is over `window` is recorded in `calls`, like every
    request, and answered with provider_error("400 prompt is too long: N tokens > W maximum"),
    using up no step: the provider refused it before any model read it. Every other request is
    answered by the next step, as in ScriptedModel, and its reply's usage["input"] is the count."""

    def __init__(self, steps: Iterable[Any], *, window: int, check: bool = False):
        super().__init__(steps, check=check)
        if not isinstance(window, int) or window < 1:
            raise ValueError(f"WindowedModel: window={window!r} must be a whole number of "
                             "tokens, 1 or more")
        self.window = window

    def complete(self, system: str, messages: list, tools: list | None = None) -> dict:
        request = Request.made(type(self).__name__, system, messages, tools, len(self.calls) + 1)
        used = request_tokens(request)
        if used > self.window:
            self.calls.append(request)
            refused = provider_error(
                f"400 prompt is too long: {used} tokens > {self.window} maximum")
            refused["usage"] = {"input": 0, "output": 0}   # refused before it was read
            request.reply = refused
            return refused
        return super().complete(system, messages, tools)

    def __repr__(self) -> str:
        return (f"WindowedModel({len(self.steps)} steps, window={self.window}, "
                f"{len(self.calls)} calls)")


# -- the summariser -----------------------------------------------------------------------------

_CONSTRAINT = re.compile(r"\b(must|never|always|only|do not|don't)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def _words(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content
                        if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _calls(message: dict) -> list:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _section(summary: str, heading: str) -> list[str]:
    """The lines under `## heading` in an earlier summary."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", summary, re.S | re.M)
    return [line for line in (match.group(1).splitlines() if match else []) if line.strip()]


def _summarise(messages: list) -> str:
    """The summary of `messages`, read from them and from nothing else."""
    earlier = ""
    if (messages and messages[0].get("role") == "user"
            and _words(messages[0]).startswith(SUMMARY_PREFIX)):
        earlier, messages = _words(messages[0])[len(SUMMARY_PREFIX):], messages[1:]
    users = [_words(m) for m in messages if m.get("role") == "user"]

    if earlier:
        goal = _section(earlier, "Goal")
    elif messages and messages[0].get("role") == "user":
        goal = [_words(messages[0])]
    else:
        first = messages[0].get("role") if messages else "nothing"
        goal = [f"(unknown: the conversation I was sent starts with a {first} message, "
                "not the user's request)"]

    constraints = _section(earlier, "Constraints") if earlier else []
    for text in users:
        constraints += [f"- {s.strip()}" for s in _SENTENCE.findall(text) if _CONSTRAINT.search(s)]

    progress = _section(earlier, "Progress") if earlier else []
    asked = {}
    for m in messages:
        for c in _calls(m):
            asked[c.get("id")] = c
        if m.get("role") == "toolResult":
            c = asked.pop(m.get("tool_call_id"), None)
            if c is None:
                progress.append(f"- [?] a {m.get('tool_name')} result for {m.get('tool_call_id')}, "
                                "whose call I was not sent")
            else:
                args = json.dumps(c.get("arguments"), ensure_ascii=False)
                mark = "!" if m.get("is_error") else "x"
                progress.append(f"- [{mark}] {c.get('name')} {_short(args, 40)}: "
                                f"{_short(_words(m), 50)}")
    for c in asked.values():
        progress.append(f"- [ ] {c.get('name')} {c.get('id')}: no result")

    decisions = _section(earlier, "Decisions") if earlier else []
    for m in messages:
        if m.get("role") == "assistant":
            decisions += [f"- {s.strip()}" for s in _SENTENCE.findall(_words(m))
                          if s.strip().lower().startswith("decision:")]

    later = users if earlier else users[1:]
    next_steps = [f"- {_short(later[-1], 80)}"] if later else ["- carry on towards the goal"]

    def block(heading: str, lines: list[str]) -> str:
        once = list(dict.fromkeys(lines))       # a line said twice is said once
        return f"## {heading}\n" + "\n".join(once or ["- (none)"])

    return "\n\n".join([block("Goal", goal), block("Constraints", constraints),
                        block("Progress", progress), block("Decisions", decisions),
                        block("Next steps", next_steps)])


_MESSAGE = re.compile(r'^<message role="(\w+)"(?: id="([^"]*)" name="([^"]*)" error="(true|false)")?>\n'
                      r'(.*?)^</message>$', re.S | re.M)
_CALL = re.compile(r'^<call id="([^"]*)" name="([^"]*)">(.*)</call>$')


def _unwrap(text: str) -> list | None:
    """The messages of a conversation sent as text (harness.conversation_text's layout:
    <conversation>, one <message ...> ... </message> each), or None if `text` is not one."""
    if not text.startswith("<conversation>\n"):
        return None
    body = text[len("<conversation>\n"):text.find("\n</conversation>")]
    messages = []
    for role, call_id, name, error, inside in _MESSAGE.findall(body + "\n"):
        lines = inside[:-1].split("\n") if inside else []
        if role == "assistant":
            calls = [_CALL.match(line) for line in lines]
            words = "\n".join(line for line, c in zip(lines, calls) if not c)
            content = ([{"type": "text", "text": words}] if words else []) + [
                {"type": "toolCall", "id": c.group(1), "name": c.group(2),
                 "arguments": _json(c.group(3))} for c in calls if c]
            messages.append({"role": "assistant", "content": content})
        elif role == "toolResult":
            messages.append({"role": "toolResult", "tool_call_id": call_id, "tool_name": name,
                             "content": "\n".join(lines), "is_error": error == "true"})
        else:
            messages.append({"role": role, "content": "\n".join(lines)})
    return messages


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def summariser(otherwise: Any = None) -> Callable[[Request], dict]:
    """A step (or, with lab.forever, every step) for the model a harness asks to summarise.

    Asked with no tools, it answers with a summary of the messages it was sent, the last one
    (the request to summarise) left out; or, when it is sent one user message that holds the
    conversation as text (harness.conversation_text's layout), of the messages in that text, in five sections: ## Goal, ## Constraints,
    ## Progress, ## Decisions, ## Next steps. Each is read from those messages only:
    - Goal: the first message, if it is the user's; if it is an earlier summary, that summary's
      goal; otherwise it says the goal is unknown and why.
    - Constraints: every sentence of a user message with must, never, always, only, do not.
    - Progress: each tool call with its result ([x], or [!] if is_error); a result whose call it
      was not sent is [?]; a call with no result is [ ].
    - Decisions: assistant sentences that begin "Decision:".
    - Next steps: the last user message after the first.
    An earlier summary at the start is carried forward, section by section.

    Offered tools, it does not summarise: it carries on the work. `otherwise`, a step (usually the
    cell's worker, a function of the request), says how; without one it replies with a call to
    the first tool it was offered and no text. So one model can do both jobs:
    lab.WindowedModel([lab.forever(lab.summariser(otherwise=worker))], window=...)."""
    def step(request: Request) -> Any:
        if request.tools and otherwise is not None:
            return otherwise(request) if callable(otherwise) else otherwise
        if request.tools:
            first = request.tools[0]
            name = first.get("name", "tool") if isinstance(first, dict) else "tool"
            return reply(call(name, {}, id="s1"))
        messages = list(request.messages)
        sent = _unwrap(_words(messages[-1])) if len(messages) == 1 else None
        if sent is not None:            # the conversation as text, and the request after it
            return say(_summarise(sent))
        if messages and messages[-1].get("role") == "user":
            messages = messages[:-1]
        return say(_summarise(messages))
    return step


# -- lesson 12's job: rename a setting in eight files ---------------------------------------------

RENAME_NAMES = [f"{c}.py" for c in "abcdefgh"]
RENAME_FILES = {n: "".join(f"SETTING_{k} = {k}  # was PORT\n" for k in range(30))
                for n in RENAME_NAMES}
RENAME_TASK = ("Rename PORT to HTTP_PORT in every .py file here, one file per "
               "turn. Never touch tests/.")


def renamer(request: Request) -> dict:
    """Lesson 12's worker, exactly as its first cell prints it. The model. It goes only by what it
    is sent: the task, the file list and what is done come from the transcript or a summary in it."""
    sent = request.messages
    words = " ".join(m["content"] if isinstance(m["content"], str)
                     else json.dumps(m["content"]) for m in sent)

    def tool(name: str, args: dict) -> dict:
        return reply(call(name, args, id=f"c{len(sent)}"))
    asked = " ".join(m["content"] for m in sent if m["role"] == "user")
    if "HTTP_PORT" not in asked:
        return say("What should I do next?")
    if not re.search(r"a\.py\s+b\.py\s+c\.py", words):
        return tool("bash", {"command": "ls"})
    done = re.findall(r'write"?(?:, "arguments":)? \{"path": "(\w\.py)"',
                      words)      # write calls, or "[x] write" in a summary
    todo = [n for n in RENAME_NAMES if n not in done]
    last = sent[-1]
    if not todo:
        return say("All eight files now use HTTP_PORT.")
    if last["role"] == "user" or last.get("tool_name") == "bash":
        return tool("read", {"path": todo[0]})
    if last.get("tool_name") == "read":
        new = last["content"].replace("PORT", "HTTP_PORT")
        return tool("write", {"path": todo[0], "content": new})
    return say(f"{done[-1]} done.")


def rename_session(harness: Any, prompts: int) -> tuple[list, list]:
    """Lesson 12's `long_session`, as its second cell prints it, with the reader's harness module
    passed in: the renaming job run for `prompts` prompts (the task, then "Next.") by a Harness
    on the stage's model, in a window big enough for all of it. Returns (the record, the tools)."""
    from . import drive                      # the package's, imported late: it imports this file
    from .shell import Shell
    from .workspace import Workspace
    ws = Workspace(RENAME_FILES)
    tools = [harness.make_bash_tool(Shell(ws)),
             harness.make_read_tool(ws), harness.make_write_tool(ws)]
    h = harness.Harness(ScriptedModel([_forever(renamer)]), harness.SYSTEM, tools)
    for text in [RENAME_TASK] + ["Next."] * (prompts - 1):
        drive(h.prompt(text))
    return list(h.messages), tools
