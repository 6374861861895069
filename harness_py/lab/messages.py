"""Messages, and three ways of looking at a transcript.

A message is a plain dict, tagged with the role that spoke. These helpers build the three roles the
book uses, in exactly the shape the course harness makes them, so that a cell can write
`lab.reply(lab.call("read", {...}))` instead of spelling out four nested dicts:

    {"role": "user", "content": "Which port?"}
    {"role": "assistant", "content": [<blocks>], "stop_reason": "stop" | "toolUse" | "error"}
    {"role": "toolResult", "tool_call_id": "c1", "tool_name": "read", "content": "...",
     "is_error": False}

An assistant's content is a list of blocks: {"type": "text", "text": ...} and
{"type": "toolCall", "id", "name", "arguments"}. A user's content is a string (or, rarely, a list of
text blocks).

Then four readers, because a transcript is easy to get subtly wrong and hard to read as raw JSON:

    show(messages)      one line per message, for a person
    shape(messages)     the whole transcript as one short line: "U A[c1] R(c1) A"
    validate(messages)  what a provider would refuse, as a list of sentences ([] when it is fine)
    timeline(record, calls)   call by call, the record as it stood beside what the model was sent

Nothing here keeps state: the same calls give the same dicts in every process, which is what lets
the book's recorded outputs match what runs in the page.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

__all__ = [
    "user", "text", "call", "reply", "say", "tool_result", "provider_error",
    "show", "shape", "validate", "timeline", "CLIP",
]

ROLES = ("user", "assistant", "toolResult")
CLIP = 80  # show() clips a text longer than this many characters
ELLIPSIS = "\u2026"


# -- building messages ------------------------------------------------------------------------


def user(text: str) -> dict:
    """A user message. Its content is a plain string, as in the course harness's user_message."""
    return {"role": "user", "content": text}


def text(t: str) -> dict:
    """A text block, for the content of an assistant message."""
    return {"type": "text", "text": t}


def call(name: str, arguments: dict, id: str | None = None) -> dict:
    """A toolCall block: the model asks for tool `name` with `arguments`.

    Give `id` when the id matters to the story (the book's cells say id="w1"). Without it the id
    is worked out from the name and arguments ("call_" + 8 hex digits of a hash), not drawn from a
    counter, so that building the same call twice gives two equal dicts, in any process and in any
    order. The price: two identical calls in one transcript get one id, and validate() says so.
    Give them ids of their own.
    """
    if id is None:
        key = json.dumps([name, arguments], sort_keys=True, default=repr)
        id = "call_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    return {"type": "toolCall", "id": id, "name": name, "arguments": arguments}


def reply(*blocks: dict | str) -> dict:
    """An assistant message holding `blocks`, in order. A plain string is taken as a text block.

    stop_reason is "toolUse" when any block is a toolCall and "stop" otherwise: the model stops
    either to wait for tool results or because it has finished.
    """
    content = [text(b) if isinstance(b, str) else b for b in blocks]
    asks = any(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)
    return {"role": "assistant", "content": content, "stop_reason": "toolUse" if asks else "stop"}


def say(t: str) -> dict:
    """An assistant message that only talks: reply(text(t))."""
    return reply(text(t))


def tool_result(call: dict, content: str, is_error: bool = False) -> dict:
    """The toolResult message that answers `call` (a toolCall block): its id and name, and what
    the tool said. is_error means the tool could not do its job."""
    return {"role": "toolResult", "tool_call_id": call["id"], "tool_name": call["name"],
            "content": content, "is_error": is_error}


def provider_error(t: str) -> dict:
    """A failed reply, in the shape the course harness's error_message() makes: nothing in
    content, stop_reason "error", and the reason in error_message. As a ScriptedModel step it is
    what a provider that fell over sends back."""
    return {"role": "assistant", "content": [], "stop_reason": "error", "error_message": t}


# -- show -------------------------------------------------------------------------------------


def _quote(t: str, clip: int | None) -> str:
    """`t` as a JSON string literal; past `clip` characters it is cut, and the cut is said
    outside the quotes, so a clipped text can never be mistaken for a whole one."""
    if clip is not None and len(t) > clip:
        return json.dumps(t[:clip], ensure_ascii=False) + f"{ELLIPSIS} ({len(t)} chars)"
    return json.dumps(t, ensure_ascii=False)


def _json(value: Any, clip: int | None) -> str:
    """`value` as JSON, cut with an ellipsis past `clip` characters."""
    s = json.dumps(value, ensure_ascii=False, default=repr)
    if clip is not None and len(s) > clip:
        return s[:clip] + ELLIPSIS
    return s


def _block(block: Any, clip: int | None) -> str:
    """One content block, as show() writes it."""
    if isinstance(block, str):
        return _quote(block, clip)
    if not isinstance(block, dict):
        return f"?{_json(block, clip)}"
    kind = block.get("type")
    if kind == "text":
        return _quote(str(block.get("text", "")), clip)
    if kind == "toolCall":
        return f"toolCall {block.get('id')} {block.get('name')}({_json(block.get('arguments'), clip)})"
    if kind == "thinking":
        return "thinking(" + _quote(str(block.get("thinking", "")), clip) + ")"
    return f"{kind}({_json({k: v for k, v in block.items() if k != 'type'}, clip)})"


def _content(content: Any, clip: int | None) -> str:
    """A message's content: a string is quoted, a list is its blocks joined with " + "."""
    if isinstance(content, str):
        return _quote(content, clip)
    if isinstance(content, list):
        return " + ".join(_block(b, clip) for b in content) if content else "(empty)"
    return _json(content, clip)


def _show_one(m: Any, clip: int | None) -> str:
    if not isinstance(m, dict):
        return f"? -> {_json(m, clip)}"
    role = m.get("role")
    if role == "toolResult":
        line = f"toolResult {m.get('tool_call_id')} -> {_content(m.get('content'), clip)}"
        return line + ("  [is_error]" if m.get("is_error") else "")
    if role == "assistant":
        content = m.get("content")
        stop = m.get("stop_reason")
        if stop == "error":
            parts = [_content(content, clip)] if content else []
            parts.append("error: " + _quote(str(m.get("error_message", "")), clip))
            return "assistant -> " + " + ".join(parts)
        line = f"assistant -> {_content(content, clip)}"
        asks = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "toolCall" for b in content)
        if stop is not None and stop != ("toolUse" if asks else "stop"):
            line += f"  [stop_reason: {stop}]"
        return line
    return f"{role} -> {_content(m.get('content'), clip)}"


def show(messages: Iterable[dict], clip: int | None = CLIP) -> str:
    """The transcript for a person: one line per message, "<role> -> <what it holds>".

        user -> "Write a.py."
        assistant -> toolCall w1 write({"path": "a.py", "content": "X = 1\\n"})
        toolResult w1 -> "Successfully wrote to a.py."
        assistant -> "Done."

    Texts are JSON string literals, so a newline shows as \\n and every line stays one line.
    A call is "toolCall <id> <name>(<arguments as JSON>)". An assistant message with several
    blocks joins them with " + ": `assistant -> "Running them." + toolCall c1 bash({...})`.
    A failed reply shows its reason: `assistant -> error: "overloaded"` (after any content it got
    out: `assistant -> "Half an ans" + error: "connection reset"`). A result marked is_error ends
    in "  [is_error]"; a stop_reason that does not follow from the content (not "toolUse" with
    calls, not "stop" without: "length", "aborted") ends in "  [stop_reason: <it>]"; a message
    with no stop_reason at all gets no mark. Empty content is "(empty)".
    A text longer than `clip` characters shows its first `clip`, then "… (N chars)" after the
    quotes; arguments JSON longer than `clip` is cut with "…". clip=None shows everything.
    """
    return "\n".join(_show_one(m, clip) for m in messages)


# -- shape ------------------------------------------------------------------------------------


def shape(messages: Iterable[dict]) -> str:
    """The transcript in one short line, for seeing its structure at a glance.

    U is a user message, A an assistant message, A[c1,c2] one that calls c1 and c2, R(c1) the
    result for c1 (marked is_error or not: the pairing is what shape is for). A failed reply
    (stop_reason "error") is A!. A message with any other role is ?<role>.
    Example: "U A[w1] R(w1) A".
    """
    marks = []
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else None
        if role == "user":
            marks.append("U")
        elif role == "assistant":
            mark = "A!" if m.get("stop_reason") == "error" else "A"
            content = m.get("content") if isinstance(m.get("content"), list) else []
            ids = [str(b.get("id")) for b in content
                   if isinstance(b, dict) and b.get("type") == "toolCall"]
            marks.append(mark + (f"[{','.join(ids)}]" if ids else ""))
        elif role == "toolResult":
            marks.append(f"R({m.get('tool_call_id')})")
        else:
            marks.append(f"?{role}")
    return " ".join(marks)


# -- validate ---------------------------------------------------------------------------------


def _content_problems(where: str, role: str, content: Any) -> list[str]:
    """What is wrong with the content of one message, by the rules of its role."""
    if role in ("user", "toolResult"):
        if isinstance(content, str):
            return []
        if isinstance(content, list):
            out = []
            for k, b in enumerate(content):
                if not (isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)):
                    out.append(f"{where}: content[{k}] of a {role} message must be a text block, "
                               f"got {_json(b, 60)}")
            return out
        return [f"{where}: content of a {role} message must be a string, got {type(content).__name__}"]
    # assistant
    if not isinstance(content, list):
        return [f"{where}: content of an assistant message must be a list of blocks, "
                f"got {type(content).__name__}"]
    if not content:
        return [f"{where}: an assistant message with no content (a failed reply?); Anthropic's "
                "Messages API refuses an empty one anywhere but last"]
    out = []
    for k, b in enumerate(content):
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "text":
            if not isinstance(b.get("text"), str):
                out.append(f"{where}: content[{k}] is a text block whose text is not a string")
        elif kind == "thinking":
            pass
        elif kind == "toolCall":
            if not (isinstance(b.get("id"), str) and b.get("id")):
                out.append(f"{where}: content[{k}] is a toolCall with no id")
            if not isinstance(b.get("name"), str):
                out.append(f"{where}: content[{k}] is a toolCall with no name")
            if not isinstance(b.get("arguments"), dict):
                out.append(f"{where}: content[{k}], toolCall {b.get('id')}: arguments must be a "
                           f"dict, got {type(b.get('arguments')).__name__}")
        else:
            out.append(f"{where}: content[{k}] is not a text or toolCall block: {_json(b, 60)}")
    return out


def validate(messages: Iterable[dict]) -> list[str]:
    """What a provider would refuse in this transcript, one sentence per problem; [] if nothing.

    The rules are the ones providers enforce and the course harness has to keep: the first
    message is the user's; every role is user, assistant or toolResult; content has the type its
    role needs; an assistant message is not empty (Anthropic's Messages API allows an empty one
    only as the last message; this is stricter and checks every one); and every tool call is
    answered at once: the messages right after an assistant message that calls c1 and c2 are the
    results for c1 and then c2, exactly one each. A result whose call is nowhere, or comes later, or was already
    answered, is a problem, and so is a call id used twice. Each sentence starts with the place,
    "messages[3]", counted from 0 as Python counts.
    """
    messages = list(messages)
    problems: list[str] = []
    if not messages:
        return ["no messages: a request needs at least one, from the user"]

    calls_at: dict[str, int] = {}       # call id -> index of the message that made it
    answered: set[str] = set()
    waiting: list[tuple[str, str, int]] = []  # (id, name, index) of calls still owed a result

    def unanswered(now: str) -> None:
        for cid, name, i in waiting:
            problems.append(f"messages[{i}] calls {cid} ({name}), and no result for it follows: "
                            f"{now}")
        waiting.clear()

    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            unanswered(f"{where} is not a message")
            problems.append(f"{where}: not a dict but {type(m).__name__}")
            continue
        role = m.get("role")
        if i == 0 and role != "user":
            problems.append(f"{where}: the first message must be the user's, not {role!r}")
        if role not in ROLES:
            unanswered(f"{where} is not a tool result")
            problems.append(f"{where}: unknown role {role!r} (known: {', '.join(ROLES)})")
            continue
        problems.extend(_content_problems(where, role, m.get("content")))

        if role == "toolResult":
            cid = m.get("tool_call_id")
            if not isinstance(m.get("is_error", False), bool):
                problems.append(f"{where}: is_error must be True or False")
            if waiting and cid == waiting[0][0]:
                waiting.pop(0)
                answered.add(cid)
                continue
            if any(cid == w[0] for w in waiting):
                first = waiting[0]
                problems.append(f"{where}: the result for {cid} comes before the result for "
                                f"{first[0]}; results must follow their calls in call order")
                waiting[:] = [w for w in waiting if w[0] != cid]
                answered.add(cid)
                continue
            unanswered(f"{where} is a result for {cid}")
            if cid in answered:
                problems.append(f"{where}: a second result for {cid} (its call is "
                                f"messages[{calls_at[cid]}])")
            elif cid in calls_at:
                problems.append(f"{where}: a result for {cid}, which was not answered at once "
                                f"after its call in messages[{calls_at[cid]}]")
            else:
                later = [j for j in range(i + 1, len(messages)) if isinstance(messages[j], dict)
                         and messages[j].get("role") == "assistant"
                         and isinstance(messages[j].get("content"), list)
                         and any(isinstance(b, dict) and b.get("type") == "toolCall"
                                 and b.get("id") == cid for b in messages[j]["content"])]
                if later:
                    problems.append(f"{where}: a result for {cid} before its call in "
                                    f"messages[{later[0]}]")
                else:
                    problems.append(f"{where}: a result for {cid}, but no message calls {cid}")
            continue

        unanswered(f"{where} is {'an' if role == 'assistant' else 'a'} {role} message")
        if role == "assistant" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "toolCall" and isinstance(b.get("id"), str):
                    cid = b["id"]
                    if cid in calls_at:
                        problems.append(f"{where}: call id {cid} is used again (first in "
                                        f"messages[{calls_at[cid]}]); every call needs its own id")
                        continue
                    calls_at[cid] = i
                    waiting.append((cid, str(b.get("name")), i))

    unanswered("the transcript ends first")
    return problems


# -- timeline ---------------------------------------------------------------------------------

RULE = "\u2500"          # the line drawn across a step's heading
TIMELINE_MARKS = {
    "=": "as recorded",
    "+": "only in the view",
    "-": "not sent",
    "~": "moved",
}


def _clip(s: str, width: int) -> str:
    """`s` cut to `width` characters, the cut said by a final ellipsis."""
    return s if len(s) <= width else s[:width - 1] + ELLIPSIS


def _brief(m: Any) -> str:
    """One message after its shape mark, short: what it says, calls as name(arguments)."""
    if not isinstance(m, dict):
        return _json(m, None)
    role = m.get("role")
    content = m.get("content")
    if role == "toolResult":
        flag = "[is_error] " if m.get("is_error") else ""
        return flag + _content(content, None)
    if role == "assistant" and isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "toolCall":
                parts.append(f"{b.get('name')}({_json(b.get('arguments'), None)})")
            else:
                parts.append(_block(b, None))
        if m.get("stop_reason") == "error":
            parts.append("error: " + _quote(str(m.get("error_message", "")), None))
        return " + ".join(parts) if parts else "(empty)"
    return _content(content, None)


def _cell(m: Any, width: int) -> str:
    """A message as one cell of a timeline column: its shape mark, then what it says."""
    return _clip(f"{shape([m]):<6} {_brief(m)}", width)


def _places(view: list, record: list) -> list[int | None]:
    """For each message of `view`, the index of the same message in `record`, or None: the very
    object first (a view is built of the record's own dicts), then an equal one not yet placed
    (for a harness that copies)."""
    where: dict[int, int] = {}
    for i, m in enumerate(record):
        where.setdefault(id(m), i)
    places: list[int | None] = []
    used: set[int] = set()
    for m in view:
        i = where.get(id(m))
        places.append(i if i is not None and i not in used else None)
        if places[-1] is not None:
            used.add(places[-1])
    for k, m in enumerate(view):
        if places[k] is None:
            i = next((j for j, r in enumerate(record) if j not in used and r == m), None)
            places[k] = i
            if i is not None:
                used.add(i)
    return places


def _as_it_stood(record: list, request: Any, floor: int) -> tuple[int, int]:
    """Where the record stood when `request` was made: (its length then, where the next call's
    record starts at the least). It is everything before the reply the call got back, found in
    the record by identity, or else as an equal message at or after the last one the call was
    sent (a log read back from its file holds copies). A call whose reply is nowhere in the
    record (it raised; a summary kept elsewhere) is given the record up to the last message it
    was sent, and never less than the call before it had."""
    sent = [i for i in _places(list(request.messages), record) if i is not None]
    low = max([floor] + [i + 1 for i in sent])
    reply = getattr(request, "reply", None)
    if reply is not None:
        at = next((i for i, m in enumerate(record) if m is reply), None)
        if at is None:
            at = next((i for i in range(low, len(record)) if record[i] == reply), None)
        if at is not None:
            return at, at + 1
    return low, low


def _rows(before: list, view: list) -> list[tuple[Any, str, Any]]:
    """The two columns of one step, row by row: (record message or None, mark, view message or
    None). A message sent as recorded sits on one row with itself; the rest follow the marks of
    TIMELINE_MARKS."""
    places = _places(view, before)
    sent = {i for i in places if i is not None}
    rows: list[tuple[Any, str, Any]] = []
    at = 0
    for m, i in zip(view, places):
        if i is None:
            rows.append((None, "+", m))
        elif i >= at:
            rows.extend((before[j], "~" if j in sent else "-", None) for j in range(at, i))
            rows.append((before[i], "=", m))
            at = i + 1
        else:
            rows.append((None, "~", m))
    rows.extend((before[j], "~" if j in sent else "-", None) for j in range(at, len(before)))
    return rows


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def timeline(record: Iterable[dict], calls: Iterable[Any], width: int = 36) -> str:
    """A run told call by call: for each model call, the record as it stood beside exactly the
    messages that call was sent (the view), one message a row, then the reply it got back.

    `record` is the harness's list (h.messages), or a log's messages; `calls` is what the model
    recorded, model.calls (a model is taken for its .calls), or a slice of it. Each step is headed
    "── call k of n: ..." ("── step k of n: model call N, ..." for a slice) and the text ends
    "── end of timeline"; between them, a row is `<record cell> <mark> <view cell>`, each cell
    `width` characters: the message's shape() mark, then what it says, cut with "…"; every line of
    a step keeps to 2 * width + 3 characters (a narrow one has shorter headings). The marks:

        =  as recorded: sent as the record holds it, in its place
        +  only in the view: not in the record (a stand-in the view made up)
        -  not sent: in the record, left out of the view
        ~  moved: sent, in another place (a result moved to its call)

    The record as it stood is everything before the call's reply in `record` (the very dict, or
    for a log read back from its file an equal one after what the call was sent); a call with no
    reply there (a power cut, an exception, a summary kept elsewhere) gets the record up to the
    last message it was sent, and no less than the call before. Plain text, the same in every
    Python: a page draws it as a stepper."""
    if isinstance(width, bool) or not isinstance(width, int) or width < 20:
        raise ValueError(f"timeline: width={width!r} must be a whole number of characters, "
                         "20 or more")
    if hasattr(calls, "calls") and not isinstance(calls, (list, tuple)):
        calls = calls.calls
    record = list(record)
    calls = list(calls)
    for k, request in enumerate(calls, 1):
        if not isinstance(getattr(request, "messages", None), (list, tuple)):
            raise TypeError(f"timeline: calls[{k - 1}] is not a model call (a Request, from "
                            f"model.calls) but {type(request).__name__}")
    full = 2 * width + 3
    out = [f"Timeline of {_count(len(calls), 'model call')}; the record now: "
           f"{shape(record) or '(empty)'}",
           "  ".join(f"{mark} {words}" for mark, words in TIMELINE_MARKS.items())]
    # A run of one model's calls that does not start at its first (model.calls[-3:]) is "step k
    # of n", each step naming its call by number; anything else is "call k of n".
    numbers = [getattr(request, "number", None) for request in calls]
    whole = not (numbers and isinstance(numbers[0], int) and numbers[0] > 1
                 and numbers == list(range(numbers[0], numbers[0] + len(numbers))))
    floor = 0
    for k, request in enumerate(calls, 1):
        view = list(request.messages)
        held, floor = _as_it_stood(record, request, floor)
        before = record[:held]
        which = (f"call {k} of {len(calls)}: " if whole else
                 f"step {k} of {len(calls)}: model call {getattr(request, 'number', '?')}, ")
        head = (f"{RULE * 2} {which}the record held {_count(len(before), 'message')}, "
                f"the view {len(view)} ")
        if len(head) + 2 > full:      # a narrow timeline says it in fewer words
            head = f"{RULE * 2} {which}record {len(before)}, view {len(view)} "
        out.append(head + RULE * max(2, full - len(head)))
        number = k if whole else getattr(request, "number", k)
        columns = (f"{'record, as it stood':<{width}}   view, what call {number} was sent")
        out.append(columns if len(columns) <= full else f"{'record':<{width}}   view")
        for left, mark, right in _rows(before, view):
            cell = _cell(left, width) if left is not None else ""
            line = f"{cell:<{width}} {mark} {_cell(right, width) if right is not None else ''}"
            out.append(line.rstrip())
        if not before and not view:
            out.append(f"{'(nothing)':<{width}}   (nothing)")
        reply = getattr(request, "reply", None)
        said = (_clip(f"{shape([reply])} {_brief(reply)}", full - len("reply: "))
                if reply is not None else "none: the call raised before it answered")
        out.append(f"reply: {said}")
    out.append(f"{RULE * 2} end of timeline")
    return "\n".join(out)
