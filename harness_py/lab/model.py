"""A scripted model: a language model with no weights, only a script.

The book's harness talks to a model through one method, complete(system, messages, tools), and
gets back an assistant message. ScriptedModel answers that call from a list of steps, one step per
call, so that every run in the book is the same run, in the page and at home, with no key and no
network. What it keeps honest:

- It has no memory. Each step sees only the request it is sent (`request.messages`), exactly as a
  real model sees only the transcript. A step that wants to know what happened must read it there.
- It records every request in `model.calls`, so a cell can show what the model was actually sent.
- Every reply carries `usage`, token counts worked out from the request and the reply, so a lesson
  can show that each call pays for the whole transcript again.
- When the script runs out it says so, by call number, instead of inventing an answer.

Steps: a message dict (sent back as a fresh copy); a plain string (a text reply); a function of
the request that returns any of these; forever(step) (used for every call from then on);
power_cut(); raises(exc); provider_error(text); forgetful() (a function of the request).
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from .messages import provider_error, say, validate
from .workspace import PowerCut, power_out

__all__ = [
    "Request", "ScriptedModel", "ScriptExhausted", "forever", "power_cut", "raises", "forgetful",
    "tokens", "usage",
]


@dataclass
class Request:
    """One call to the model, as it was made: the system prompt, the list of messages (a copy of
    the list the harness passed, holding the very same message dicts), the tool specs, and which
    call it was, counted from 1. `reply` is what the model sent back to it (the very dict the
    harness was handed), or None while there is none: a call that raised (a power cut, an
    exception) never gets one. lab.timeline reads it to find where each reply sits in a record."""
    system: str
    messages: list
    tools: list = field(default_factory=list)
    number: int = 0
    reply: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def made(cls, who: str, system: Any, messages: Any, tools: Any, number: int) -> "Request":
        """The request a harness made by calling complete(system, messages, tools) or stream(...),
        checked for its shape the way a provider checks a request body before it reads it: the
        system prompt is a string, messages a list of message dicts, tools a list (or None). A
        harness that passes them in another order is told so, instead of being answered."""
        def refuse(what: str, value: Any) -> TypeError:
            return TypeError(f"{who}: model call {number}: {what}, as in complete(system, "
                             f"messages, tools); it got {type(value).__name__} {_short(value)}")
        if not isinstance(system, str):
            raise refuse("the system prompt (the first argument) must be a string", system)
        if not isinstance(messages, (list, tuple)) or not all(isinstance(m, dict) for m in messages):
            raise refuse("messages (the second argument) must be a list of message dicts", messages)
        if tools is not None and not isinstance(tools, (list, tuple)):
            raise refuse("tools (the third argument) must be a list of tool specs", tools)
        return cls(system, list(messages), list(tools or []), number)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class ScriptExhausted(RuntimeError):
    """The model was called more times than its script has steps. An ordinary error, not a
    PowerCut: a script that is too short is a bug in the cell or the test."""


@dataclass(frozen=True)
class _Forever:
    step: Any


@dataclass(frozen=True)
class _PowerCut:
    pass


@dataclass(frozen=True)
class _Raises:
    error: Any


def forever(step: Any) -> _Forever:
    """A step used for this call and every call after it: a function of the request (the usual
    case: a model that decides from the transcript), or a message sent back every time. It must be
    the last step of a script."""
    return step if isinstance(step, _Forever) else _Forever(step)


def power_cut() -> _PowerCut:
    """A step that cuts the power during this model call: complete() raises PowerCut. The request
    is still recorded in model.calls: it was sent, and the answer never came."""
    return _PowerCut()


def raises(error: BaseException | type) -> _Raises:
    """A step that raises `error` (an exception, or an exception class) from complete(): a
    provider whose client library throws, a timeout, a dropped connection."""
    return _Raises(error)


def tokens(value: Any) -> int:
    """The book's token count: the length of `value` as JSON, in characters, divided by 4 and
    rounded up. Real tokenizers differ in detail; the proportions, which are the lesson, do not."""
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                         default=lambda o: type(o).__name__)
    return math.ceil(len(s) / 4)


def usage(request: Request, reply: dict) -> dict:
    """The `usage` a reply carries: {"input": tokens of everything sent (system, messages without
    their own usage, tools), "output": tokens of the content blocks the model produced}. Input
    grows with the transcript because every request sends all of it again."""
    sent = [{k: v for k, v in m.items() if k != "usage"} if isinstance(m, dict) else m
            for m in request.messages]
    content = reply.get("content") or []
    return {"input": tokens({"system": request.system, "messages": sent, "tools": request.tools}),
            "output": sum(tokens(b) for b in content) if isinstance(content, list) else tokens(content)}


class ScriptedModel:
    """A model that follows a script: ScriptedModel(steps), one step per call to complete().

    model.calls is the list of Request objects it was sent, oldest first. model.remaining is the
    number of steps not yet used (None once a forever step has been reached).

    check=True makes it strict the way a provider is: a request whose transcript validate() finds
    fault with gets back provider_error("400 invalid transcript: <first problem>") and uses up no
    step. Off by default, so a lesson can show what a harness sends before it learns to repair it.
    """

    def __init__(self, steps: Iterable[Any], *, check: bool = False):
        self.steps = list(steps)
        for k, step in enumerate(self.steps[:-1]):
            if isinstance(step, _Forever):
                raise ValueError(f"ScriptedModel: step {k + 1} of {len(self.steps)} is forever(...), "
                                 "so the steps after it could never be reached; put it last")
        self.calls: list[Request] = []
        self.check = check
        self._next = 0

    @property
    def remaining(self) -> int | None:
        if self.steps and isinstance(self.steps[-1], _Forever) and self._next >= len(self.steps) - 1:
            return None
        return len(self.steps) - self._next

    def complete(self, system: str, messages: list, tools: list | None = None) -> dict:
        """Answer one request: record it, take the next step, and return an assistant message
        with `usage`. May raise PowerCut, ScriptExhausted, or whatever a raises() step holds."""
        request = Request.made(type(self).__name__, system, messages, tools, len(self.calls) + 1)
        self.calls.append(request)
        if self.check:
            problems = validate(request.messages)
            if problems:
                return self._finish(request, provider_error(f"400 invalid transcript: {problems[0]}"))
        if self._next < len(self.steps):
            step = self.steps[self._next]
            if not isinstance(step, _Forever):
                self._next += 1
        else:
            n = len(self.steps)
            raise ScriptExhausted(
                f"ScriptedModel: model call {request.number} has no step: the script has {n} "
                f"step{'s' if n != 1 else ''}, {'all used' if n else 'so none to use'}. Add "
                "steps, or end the script with lab.forever(...).")
        return self._finish(request, self._perform(step, request))

    def _perform(self, step: Any, request: Request) -> dict:
        """Turn one step into a reply for `request`."""
        if isinstance(step, _Forever):
            step = step.step
        if callable(step) and not isinstance(step, type):
            step = step(request)
            if isinstance(step, _Forever):
                step = step.step
        if isinstance(step, _PowerCut):
            power_out(f"model call {request.number}, a machine-wide cut")
            raise PowerCut(f"the power went out during model call {request.number}")
        if isinstance(step, _Raises):
            error = step.error
            raise error() if isinstance(error, type) else error
        if isinstance(step, str):
            return say(step)
        if isinstance(step, dict):
            return copy.deepcopy(step)
        raise TypeError(f"ScriptedModel: model call {request.number}: a step must give a message "
                        f"dict, a string, power_cut() or raises(...), not {type(step).__name__}")

    def _finish(self, request: Request, reply: dict) -> dict:
        if "usage" not in reply:
            reply["usage"] = usage(request, reply)
        request.reply = reply
        return reply

    def __repr__(self) -> str:
        return f"ScriptedModel({len(self.steps)} steps, {len(self.calls)} calls)"


# -- forgetful --------------------------------------------------------------------------------

_FACT = re.compile(r"\bmy ([a-z][a-z ]*?) is ([^.!?\n]+)", re.IGNORECASE)
_QUESTION = re.compile(r"\bwhat(?:'s| is) my ([a-z][a-z ]*?)\s*\?", re.IGNORECASE)
_GREETING = re.compile(r"^\s*(hi|hello|hey)\b", re.IGNORECASE)


def _words(message: dict) -> str:
    """The text of a message, whatever its content holds."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict)
                        and b.get("type") == "text")
    return ""


def _forgetful(request: Request) -> dict:
    """The rules of forgetful(), applied to one request."""
    messages = request.messages
    if not messages:
        return say("I was sent no messages, so there is nothing to answer.")
    last = messages[-1]
    if last.get("role") == "toolResult":
        first = str(_words(last) or last.get("content", "")).splitlines()[:1]
        verb = "failed" if last.get("is_error") else "said"
        return say(f"The tool {verb}: {first[0] if first else '(nothing)'}")
    if last.get("role") != "user":
        return say("There is no new question for me in what you sent.")
    facts: dict[str, str] = {}
    for m in messages:
        if m.get("role") == "user":
            for key, value in _FACT.findall(_words(m)):
                facts[key.lower()] = value.strip()
    asked = _words(last)
    question = _QUESTION.search(asked)
    if question:
        key = question.group(1).lower()
        if key in facts:
            return say(f"Your {key} is {facts[key]}.")
        return say(f"I don't know your {key}.")
    stated = _FACT.findall(asked)
    if stated:
        key, value = stated[-1]
        return say(f"Nice to meet you, {value.strip()}." if key.lower() == "name" else "Noted.")
    if _GREETING.search(asked):
        return say("Hello.")
    if asked.rstrip().endswith("?"):
        return say("I can't tell from this conversation.")
    return say("Noted.")


def forgetful() -> Callable[[Request], dict]:
    """A step that answers one call from what its request says, and from nothing else. Use one
    per call, `[lab.forgetful()] * 3`, or lab.forever(lab.forgetful()) for every call.

    Its rules, all of them, applied only to the messages it is sent:
    - A user message saying "my <thing> is <value>" states a fact (the latest one wins). Only user
      messages count: the user is the one who knows their own name.
    - "What is my <thing>?" gets "Your <thing> is <value>." if some user message in the request
      stated it, and "I don't know your <thing>." if none did.
    - Stating your name gets "Nice to meet you, <name>."; any other fact, "Noted."; "hi" or
      "hello", "Hello."; any other question, "I can't tell from this conversation."; anything
      else, "Noted."
    - After a tool result it reports the result's first line: "The tool said: ..." (or "failed").
    It never calls a tool. Send it "My name is Ada." in one request and "What is my name?" in the
    next without the first, and it does not know: nothing is kept between calls.
    """
    return _forgetful
