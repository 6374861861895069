#@ block 16.3
import codecs
import os
#@ end
#@ block 14.2
import time
#@ end
#@ block 7.1..9.1
import json

#@ end
#@ block 9.1..15.1
import json
from collections import deque

#@ end
#@ block 15.1
import asyncio
import inspect
import json
from collections import deque

#@ end
# == 1 messages ==
# A conversation is a list of messages. Each message is a dict tagged with the role that spoke.

SYSTEM = "You are a helpful assistant."  # standing instructions, sent with every call

#@ block 1.1 gap
#@ spec
# The tests import two names from this file: user_message, here, and chat, in region 3.
#
# user_message(text) -> dict   a message from the user, tagged with who said it:
#     {"role": "user", "content": text}
#                              The content is the plain string, with nothing around it.
#                              Each call makes a new dict: no cache, no dict handed out twice.
#@ code

def user_message(text):
    """A message from the user. Its content is a plain string."""
    return {"role": "user", "content": text}
#@ end
#@ block 2.1 gap
#@ spec
# Spec only. The tests import two names: text_of and tool_calls.
#
# An assistant message's content is a list of blocks, each a dict with a "type", for example
#     {"type": "text", "text": "Let me look."}
#     {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}}
# One reply may hold any number of each, in any order.
#
#   text_of(message) -> str      the "text" of every text block, in order, joined with nothing
#                                between; "" when there is none
#   tool_calls(message) -> list  the toolCall blocks themselves, in the order they came
#
# Both work it out from message["content"] every time they are called. Store nothing: no extra
# key on the message, no cache anywhere. A value you work out cannot go stale.
#@ code


def text_of(message):
    """The words of an assistant message. Its content is a list of blocks, not a string (lesson 2
    explains why); the words are in the blocks of type "text"."""
    return "".join(block["text"] for block in message["content"] if block["type"] == "text")


def tool_calls(message):
    """The tool calls an assistant message asks for, in the order it asked. Worked out from
    `content` on every call and stored nowhere else."""
    return [block for block in message["content"] if block["type"] == "toolCall"]
#@ end
#@ block 5.1 gap
#@ spec
# Spec only. The tests import one name here: error_message.
#
# error_message(text) -> dict   an assistant message that says why a run stopped:
#     {"role": "assistant", "content": [], "stop_reason": "error", "error_message": text}
#                               Nothing in content, so there is nothing to act on.
#                               A new dict, with a new content list, on every call.
#@ code


def error_message(text):
    """An assistant message that says why a run stopped: nothing in `content`, stop_reason
    "error", and the reason in `error_message`. A stop is written into the record, not raised."""
    return {"role": "assistant", "content": [], "stop_reason": "error", "error_message": text}
#@ end
#@ block 2.2


# == 2 tools ==
# A tool is a dict. "name", "description" and "parameters" are advertised to the model.
# "execute" is a function, execute(arguments) -> str, that only this program ever runs.

#@ end
#@ block 4.1 gap
#@ spec
# Spec only. The tests import three names: str_arg and int_arg, here, and run_tool, below.
#
# The schema asks the model for arguments of some type, and nothing makes it send them. A tool
# reads its arguments through these two (lesson 6's tools all will), and a wrong one raises:
#   str_arg(arguments, name) -> str            arguments[name], if it is a string ("" is one).
#                                              Missing, or not a string:
#                                              ValueError(f"{name} must be a string")
#   int_arg(arguments, name, default) -> int   arguments[name], if it is an int (0 is one);
#                                              `default` if it is missing or None. Anything
#                                              else: ValueError(f"{name} must be an integer")
#                                              (True and False: as they are, or refused)
#@ code
def str_arg(arguments, name):
    """The string argument `name`, checked. The schema asked the model for a string and nobody
    made it send one, so every tool reads its arguments through here. Raises
    ValueError("<name> must be a string") when it is missing or not a string."""
    value = arguments.get(name)
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    return value


def int_arg(arguments, name, default):
    """The optional whole-number argument `name`, checked; `default` if the model left it out.
    Raises ValueError("<name> must be an integer") for anything else."""
    value = arguments.get(name)
    if value is None:
        return default
    if not isinstance(value, int):
        raise ValueError(f"{name} must be an integer")
    return value


#@ end
#@ block 2.2 gap
#@ spec
# Spec only. The tests import two names: tool_specs, here, and run_tool, below.
#
# A tool is a dict with four keys; make_write_tool, further down, builds one.
#   tool_specs(tools) -> list   what the model is told about the tools: for each tool, in order,
#                               a dict of its "name", "description" and "parameters" (one for
#                               every tool, even two that share a name). Never its "execute":
#                               the function stays in this program. Worked out from the list,
#                               and each tool's keys, on every call, like run_tool's lookup.
#@ code
def tool_specs(tools):
    """What the model is told about the tools: everything except the function."""
    return [{"name": tool["name"], "description": tool["description"],
             "parameters": tool["parameters"]} for tool in tools]
#@ end
#@ block 2.2..4.1 gap
#@ spec
# Spec only. The tests import one name here: run_tool.
#
# run_tool(tools, call) -> dict   runs one toolCall block with the tool of that name,
#                                 tool["execute"](call["arguments"]), and returns the toolResult
#                                 message that answers it:
#     {"role": "toolResult", "tool_call_id": call["id"], "tool_name": call["name"],
#      "content": <what execute returned>, "is_error": False}
#
# One call in, exactly one result out: one message, never a list, never None, and nothing
# appended anywhere. The caller puts it in the transcript. A tool that raises, or a call that
# names no tool in the list, is lesson 4's: today catch nothing and let the error go up. (The
# tests also accept lesson 4's answer, a result marked "is_error": True, so writing it early is
# no mistake.) Never answer such a call as a success.
#@ code


def run_tool(tools, call):
    """Run one tool call and return the toolResult message that answers it. One call in, exactly
    one result out: one message, never a list or None, since the model matches a result to its
    call by id. Tools just raise, and this catches nothing yet: an exception goes up to the
    caller, never a result that reads as a success (lesson 4 turns it into a result). The caller
    puts the result into the transcript."""
    tools_by_name = {tool["name"]: tool for tool in tools}
    content = tools_by_name[call["name"]]["execute"](call["arguments"])
    return {"role": "toolResult", "tool_call_id": call["id"], "tool_name": call["name"],
            "content": content, "is_error": False}
#@ end
#@ block 4.1..15.1 gap
#@ spec
# Below is lesson 2's run_tool. Still one call in and exactly one result out, now on every path:
#   - a tool that raises: the result's content is str(exception), and is_error is True (for
#     one with no message, str() is ""; its type's name is accepted there too)
#   - no tool of that name: content f"Tool {name} not found", is_error True
#   - otherwise what execute returned, as it came (never str() of it; None stays None),
#     is_error False
# A call runs its tool at most once: never a second time to see what happens. Catch Exception,
# not BaseException: Ctrl-C, sys.exit() and lab.PowerCut are not the tool's news, and go
# straight through (run_agent does not catch them either). run_tool never raises Exception.
# Tools just raise; this is the one place that turns a failure into a result.
#@ code


def run_tool(tools, call):
    """Run one tool call and return the toolResult message that answers it. One call in, exactly
    one result out, on every path. Tools just raise; this is the one place that turns a failure
    into a result the model can read. is_error means the tool could not do its job. It never
    raises Exception."""
    tools_by_name = {tool["name"]: tool for tool in tools}
    tool = tools_by_name.get(call["name"])
    if tool is None:
        content, is_error = f"Tool {call['name']} not found", True
    else:
        try:
            content, is_error = tool["execute"](call["arguments"]), False
        except Exception as exc:
            content, is_error = str(exc), True
    return {"role": "toolResult", "tool_call_id": call["id"], "tool_name": call["name"],
            "content": content, "is_error": is_error}
#@ end
#@ block 15.1 gap
#@ spec
# Below is lesson 4's run_tool. It becomes async def, and takes the run's token:
#   async def run_tool(tools, call, signal=None)
#   - a tool whose execute is an async def is called as execute(arguments, signal) and awaited:
#     it may take a while, and it may look at the token while it works
#   - a plain execute is called as before, execute(arguments)
#   - asyncio.CancelledError is not the tool's failure: it must go up, untouched, whether or not
#     the token is cancelled too. Catching Exception already lets it through; never catch
#     BaseException or CancelledError here
#@ code


async def run_tool(tools, call, signal=None):
    """Run one tool call and return the toolResult message that answers it: one call in, exactly
    one result out, on every path a tool can fail by. An async tool is awaited and handed the
    run's token, so a long job can see that it is asked to stop. A cancelled task is not a tool
    failure: CancelledError is not an Exception, and it goes up to whoever cancelled."""
    tools_by_name = {tool["name"]: tool for tool in tools}
    tool = tools_by_name.get(call["name"])
    if tool is None:
        content, is_error = f"Tool {call['name']} not found", True
    else:
        execute = tool["execute"]
        try:
            if inspect.iscoroutinefunction(execute):
                content = await execute(call["arguments"], signal)
            else:
                content = execute(call["arguments"])
            is_error = False
        except Exception as exc:    # CancelledError is a BaseException: it is not caught here
            content, is_error = str(exc), True
    return {"role": "toolResult", "tool_call_id": call["id"], "tool_name": call["name"],
            "content": content, "is_error": is_error}
#@ end
#@ block 6.1 given


MAX_LINES = 2000     # The budget of one tool result. Whatever a tool returns is re-read, and
MAX_BYTES = 50_000   # paid for, on every later turn. Bytes, not characters: "é" is two.
#@ end
#@ block 6.1 gap
#@ spec
# Spec only. The tests import one name here: truncate_head.
#
# truncate_head(text, max_lines=MAX_LINES, max_bytes=MAX_BYTES) -> (kept, lines_shown)   the
#     start of `text` that fits the budget, for files: the first lines, at most max_lines of
#     them and at most max_bytes bytes of UTF-8 in all (len(line.encode())), whole lines only,
#     each kept with its newline. Stop at the first line that does not fit; never skip it to
#     fit a smaller one after it. If even the first line is over max_bytes, ("", 0).
#@ code


def truncate_head(text, max_lines=MAX_LINES, max_bytes=MAX_BYTES):
    """The start of `text` that fits the budget, for files: (kept, lines_shown). Whole lines
    only, newlines included, sized in UTF-8 bytes. If even the first line is too big, the answer
    is ("", 0): half a line is worse than none."""
    kept, size = [], 0
    for line in text.splitlines(keepends=True):
        size += len(line.encode())
        if len(kept) == max_lines or size > max_bytes:
            break
        kept.append(line)
    return "".join(kept), len(kept)
#@ end
#@ block 6.2 gap
#@ spec
# Spec only. The tests import one name here: truncate_tail.
#
# truncate_tail(text, max_lines=MAX_LINES, max_bytes=MAX_BYTES) -> (kept, lines_shown)   the
#     end of `text` that fits the budget, for command output, where the verdict comes last:
#     the last lines, at most max_lines of them and at most max_bytes bytes of UTF-8, whole
#     lines only, newlines included, in their order. Stop at the first line from the end that
#     does not fit.
#@ code


def truncate_tail(text, max_lines=MAX_LINES, max_bytes=MAX_BYTES):
    """The end of `text` that fits the budget, for command output, where the verdict comes last:
    (kept, lines_shown). Whole lines only, newlines included, sized in UTF-8 bytes."""
    kept, size = [], 0
    for line in reversed(text.splitlines(keepends=True)):
        size += len(line.encode())
        if len(kept) == max_lines or size > max_bytes:
            break
        kept.append(line)
    return "".join(reversed(kept)), len(kept)
#@ end
#@ block 6.1 gap
#@ spec
# Spec only. The tests import one name: make_read_tool.
#
# make_read_tool(ws, max_lines=MAX_LINES, max_bytes=MAX_BYTES) -> tool   the `read` tool over
# the workspace `ws`: named "read", parameters path (string, required), offset (integer, the
# first line, from 1) and limit (integer, how many lines). The description states the budget:
#     f"Read a text file and return its contents. One call returns at most {max_lines} lines or "
#     f"{max_bytes} bytes; use offset to read on."
# execute(arguments) reads them with str_arg and int_arg (offset 1 and limit None by default):
#   - offset or limit below 1: ValueError("offset and limit must be 1 or more")
#   - no such file: FileNotFoundError(f"File not found: {path}. Files here: {names}"), the names
#     being ws.listdir(".") joined with ", ". An error is a result too, so the list keeps to
#     the byte budget (it is one line: max_lines has nothing to count): as many names, from the
#     first, as keep the joined list, ", " included, within max_bytes bytes of UTF-8, and, if
#     some are left out, f" and {left} more" after the last one shown. If not even the first
#     name fits, the count alone: f"Files here: {len(names)} (names over the budget)". In a
#     folder with no files at all it is FileNotFoundError(f"File not found: {path}. No files here.")
#   - offset past the last line: ValueError(f"offset {offset} is past the end of {path}: "
#     f"{n} lines"). Offset 1 of an empty file is not past it: it returns "". A limit that runs
#     past the last line is not a mistake either: it reads what is there
#   - otherwise the wanted lines through truncate_head. If lines of the file are left after the
#     last one shown, add f"[Showing lines {offset}-{last} of {n}. Use offset={last + 1} to "
#     "continue.]" at the end
#   - the first wanted line alone over budget: none of it, but f"[Line {offset} of {path} is "
#     f"{size} bytes, over the {max_bytes}-byte budget of one read, so none of it is shown.]",
#     with f" Use offset={offset + 1} to skip it." just before the "]" if another line follows
#@ code


def make_read_tool(ws, max_lines=MAX_LINES, max_bytes=MAX_BYTES):
    """The `read` tool, over the workspace `ws`. One call returns at most the budget, and says
    so in a last line that tells the model how to ask for the rest."""
    def execute(arguments):
        path = str_arg(arguments, "path")
        offset, limit = int_arg(arguments, "offset", 1), int_arg(arguments, "limit", None)
        if offset < 1 or (limit is not None and limit < 1):
            raise ValueError("offset and limit must be 1 or more")
        if not ws.exists(path):
            names, shown, size = ws.listdir("."), 0, 0
            for name in names:          # the list as it is sent: ", " before all but the first
                size += len(name.encode()) + (2 if shown else 0)
                if size > max_bytes:
                    break
                shown += 1
            more = f" and {len(names) - shown} more" if shown < len(names) else ""
            if shown == 0:              # not even the first name fits: the count alone
                more = f"{len(names)} (names over the budget)"
            here = f"Files here: {', '.join(names[:shown])}{more}" if names else "No files here."
            raise FileNotFoundError(f"File not found: {path}. {here}")
        lines = ws.read_text(path).splitlines(keepends=True)
        wanted = lines[offset - 1:] if limit is None else lines[offset - 1:offset - 1 + limit]
        kept, shown = truncate_head("".join(wanted), max_lines, max_bytes)
        if offset > max(len(lines), 1):
            raise ValueError(f"offset {offset} is past the end of {path}: {len(lines)} lines")
        if wanted and shown == 0:
            skip = f" Use offset={offset + 1} to skip it." if offset < len(lines) else ""
            return (f"[Line {offset} of {path} is {len(wanted[0].encode())} bytes, over the "
                    f"{max_bytes}-byte budget of one read, so none of it is shown.{skip}]")
        last = offset + shown - 1
        if last < len(lines):
            kept += (f"[Showing lines {offset}-{last} of {len(lines)}. "
                     f"Use offset={last + 1} to continue.]")
        return kept
    return {
        "name": "read",
        "description": "Read a text file and return its contents. One call returns at most "
                       f"{max_lines} lines or {max_bytes} bytes; use offset to read on.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Path of the file to read."},
                           "offset": {"type": "integer", "description": "First line, from 1."},
                           "limit": {"type": "integer", "description": "How many lines."}},
            "required": ["path"],
        },
        "execute": execute,
    }
#@ end
#@ block 2.2..6.2 given


def make_write_tool(ws):
    """The `write` tool, over the workspace `ws`: create a file, or replace all of it. A tool is
    a plain dict: what the model is told about it, and the function that does the work."""
    def execute(arguments):
        ws.write_text(arguments["path"], arguments["content"])
        return f"Successfully wrote to {arguments['path']}."
    return {
        "name": "write",
        "description": "Write a text file. Creates the file, or replaces its whole contents.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Path of the file to write."},
                           "content": {"type": "string", "description": "The new contents."}},
            "required": ["path", "content"],
        },
        "execute": execute,
    }
#@ end
#@ block 6.2 gap
#@ spec
# Below is lesson 2's write tool. Read both arguments through str_arg, so that a call with no
# "content" is answered "content must be a string", and not just "'content'".
#@ code


def make_write_tool(ws):
    """The `write` tool, over the workspace `ws`: create a file, or replace all of it."""
    def execute(arguments):
        path, content = str_arg(arguments, "path"), str_arg(arguments, "content")
        ws.write_text(path, content)
        return f"Successfully wrote to {path}."
    return {
        "name": "write",
        "description": "Write a text file. Creates the file, or replaces its whole contents.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Path of the file to write."},
                           "content": {"type": "string", "description": "The new contents."}},
            "required": ["path", "content"],
        },
        "execute": execute,
    }
#@ end
#@ block 6.2 gap
#@ spec
# Spec only. The tests import one name: make_bash_tool.
#
# make_bash_tool(shell, max_lines=MAX_LINES, max_bytes=MAX_BYTES) -> tool   the `bash` tool:
# named "bash", one parameter, command (string, required). The description states the budget:
#     "Run a shell command and return its output (stdout and stderr together). "
#     f"Only the last {max_lines} lines or {max_bytes} bytes come back."
# execute(arguments) runs shell.run(command), which gives (output, exit_code), and returns
#   - the output through truncate_tail; if lines were dropped, followed by
#     f"\n[Showing the last {shown} of {total} lines. Narrow the command for more.]"
#   - then, if the exit code is not 0, f"\nCommand exited with code {code}"
# A command that fails has still been run. Its exit code is news for the model, not a tool
# error: execute returns it as an ordinary result and does not raise. A shell that cannot take
# the command at all (shell.run raises) is the tool failing: let the exception go up, and
# run_tool marks the result as an error.
#@ code


def make_bash_tool(shell, max_lines=MAX_LINES, max_bytes=MAX_BYTES):
    """The `bash` tool: run one command line in `shell` and return what it printed. A command
    that fails has still been run: its exit code is news for the model, not a tool error, so it
    comes back as an ordinary result that ends with a status line."""
    def execute(arguments):
        output, code = shell.run(str_arg(arguments, "command"))
        total = len(output.splitlines())
        output, shown = truncate_tail(output, max_lines, max_bytes)
        if shown < total:
            output += f"\n[Showing the last {shown} of {total} lines. Narrow the command for more.]"
        if code != 0:
            output += f"\nCommand exited with code {code}"
        return output
    return {
        "name": "bash",
        "description": "Run a shell command and return its output (stdout and stderr together). "
                       f"Only the last {max_lines} lines or {max_bytes} bytes come back.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command line."}},
            "required": ["command"],
        },
        "execute": execute,
    }
#@ end


# == 3 loop ==
# The code that talks to the model. The model keeps nothing between calls.

#@ block 1.1..3.1 gap
#@ spec
# Spec only. The tests import one name here: chat.
#
# chat(model, messages, text) -> dict   one exchange of a conversation. `messages` is the
#     transcript: a list the caller owns and passes in again for the next exchange.
#     - append user_message(text) to it, the text exactly as it was typed
#     - send the whole list: reply = model.complete(SYSTEM, messages, []) (the [] is the tools:
#       none yet)
#     - append the reply, exactly as it came back, and return it
#     If model.complete raises, chat catches nothing: the error goes up to the caller.
#     chat only appends: what the list held before stays as it was, even a user message a failed
#     call left at its end.
#
# chat keeps nothing of its own: no list outside the function, no default argument holding one.
# The model keeps nothing either. The caller's list is the only memory there is.
#@ code
def chat(model, messages, text):
    """One exchange: `text` from the user, and the model's reply, both appended to `messages`,
    the caller's list. The model keeps nothing between calls, so the whole list is sent every
    time: the transcript is the only memory there is, and nothing here keeps another."""
    messages.append(user_message(text))
    reply = model.complete(SYSTEM, messages, [])
    messages.append(reply)
    return reply
#@ end
#@ block 3.1..5.1 gap
#@ spec
# Below is lesson 1's chat. It becomes run_agent, and chat goes. The tests import run_agent.
#
# run_agent(model, system, messages, tools, prompt) -> list   puts `prompt` to the model as a
#     user message and returns once the model has answered, running every tool call it makes on
#     the way. What must hold:
#     - every message of the run (the prompt, each reply, each result) goes on `messages`, the
#       caller's list, the moment it exists, in the order it happened; nothing is kept elsewhere
#     - every model call is sent `system`, the whole list as it stands, and tool_specs(tools)
#     - every call in a reply is answered by run_tool's result, in the order the calls were
#       written, before the model is called again
#     - the run ends at the first reply with no tool_calls, and only there
#     - an exception raised by model.complete is not caught: it goes up to the caller
#     Returns this run's messages: the prompt first, the final reply last.
#@ code
def run_agent(model, system, messages, tools, prompt):
    """Put `prompt` to the model and keep going until it stops asking for tools. Every message
    of the run is appended to `messages` (the caller's list, the transcript) as it happens, and
    the whole list is sent on every call, because the model keeps nothing between calls.
    Returns this run's messages, in order; the last is the model's answer."""
    new = []  # this run's messages

    def record(message):
        """Append `message` to the transcript, and to this run's messages."""
        messages.append(message)
        new.append(message)
    record(user_message(prompt))
    while True:
        reply = model.complete(system, messages, tool_specs(tools))
        record(reply)
        calls = tool_calls(reply)
        if not calls:               # it has stopped asking: the reply is the answer
            return new
        for call in calls:          # every call gets its result before the model is asked again
            record(run_tool(tools, call))
#@ end
#@ block 5.1..7.1 gap
#@ spec
# Below is lesson 3's run_agent. It takes a keyword argument and gets two more ways to end. Each
# end is written into the record, never raised:
#   - max_turns=None: at most that many model calls (None: no limit; 0 or below: none). Count
#     the turns, and check before the call, never after: when a turn would be max_turns + 1, append
#     error_message(f"Agent stopped after max_turns={max_turns}") instead, and return
#   - a reply with stop_reason "error" (the provider failed) is appended like any other, and
#     then the run returns: none of it is acted on, even if it holds tool calls
# Every call is still sent system, the whole list (a failed reply too; an empty one may be left
# out, as lesson 10 does) and tool_specs(tools), the last call the limit allows as well.
# An exception raised by model.complete is not caught here: let it go up to the caller.
#@ code
def run_agent(model, system, messages, tools, prompt, *, max_turns=None):
    """Put `prompt` to the model and keep going until it stops asking for tools, a reply comes
    back failed (stop_reason "error"), or `max_turns` model calls have been made (None: no limit).
    Every message of the run is appended to `messages` (the caller's list, the transcript) as it
    happens. Returns this run's messages; the last says how it ended. A stop is a message in the
    record, never an exception. An exception from model.complete is not caught: it goes up to the
    caller, and the record stays whole up to the last complete message."""
    new = []  # this run's messages

    def record(message):
        """Append `message` to the transcript, and to this run's messages."""
        messages.append(message)
        new.append(message)
    record(user_message(prompt))
    turn = 0
    while True:
        turn += 1
        if max_turns is not None and turn > max_turns:   # checked before the call, never after
            record(error_message(f"Agent stopped after max_turns={max_turns}"))
            return new
        reply = model.complete(system, messages, tool_specs(tools))
        record(reply)
        if reply["stop_reason"] == "error":    # a failed reply: none of it is acted on
            return new
        calls = tool_calls(reply)
        if not calls:
            return new
        for call in calls:
            record(run_tool(tools, call))
#@ end
#@ block 7.1..9.1 gap
#@ spec
# Below is lesson 5's run_agent. Same signature and the same three ends, but it prints nothing
# and returns nothing: it becomes a generator of events, plain dicts with a "type":
#   {"type": "agent_start"}                                        first
#   {"type": "turn_start"}, then {"type": "turn_end", "message": reply}   around each turn
#   {"type": "message_end", "message": m}   for every message appended, just after the append
#   {"type": "tool_execution_start", "call": call}                  before a tool runs
#   {"type": "tool_execution_end", "call": call, "result": result}  after its message_end
#   {"type": "agent_end", "messages": [this run's messages]}        last, on every way out
# The prompt is appended at the top of the first turn, after its turn_start, just before its own
# message_end: the list changes only with a message_end, never before agent_start. A max_turns
# stop is a turn too: its error message is that turn's reply. Mutate, then announce: never yield
# a message_end before the message is on the list. An exception is no way out of that kind: one
# from model.complete, or a KeyboardInterrupt from a tool, goes straight up to the consumer, with
# no turn_end or agent_end yielded for it.
#@ code
def run_agent(model, system, messages, tools, prompt, *, max_turns=None):
    """Put `prompt` to the model and keep going until it stops asking for tools, a reply comes
    back failed (stop_reason "error"), or `max_turns` model calls have been made (None: no limit).

    A generator of events: plain dicts with a "type", which say what happened and draw nothing.
    They come in balanced pairs on every exit: agent_start ... agent_end around the run, and
    turn_start ... turn_end around each turn. The one ordering rule is mutate, then announce: a
    message is appended to `messages` (the caller's list, the record) first, and only then is its
    message_end yielded, with no event between them; the prompt too, at the top of the first turn.
    The final message is the last of agent_end's "messages". An exception (from model.complete,
    or a KeyboardInterrupt from a tool) goes straight up, with nothing yielded for it."""
    new = []  # this run's messages, for agent_end

    def record(message):
        """Append `message` to the record, then make the event that announces it."""
        messages.append(message)
        new.append(message)
        return {"type": "message_end", "message": message}

    yield {"type": "agent_start"}
    turn, calls = 0, []
    pending = [user_message(prompt)]         # user messages waiting to open the next turn
    while calls or pending:                  # one pass is one turn
        turn += 1
        yield {"type": "turn_start"}
        for message in pending:              # only here, at the top of a turn, may a user speak
            yield record(message)
        pending = []
        if max_turns is not None and turn > max_turns:   # checked before the call, never after
            reply = error_message(f"Agent stopped after max_turns={max_turns}")
        else:
            reply = model.complete(system, messages, tool_specs(tools))
        yield record(reply)
        # A failed reply: none of it is acted on.
        calls = [] if reply["stop_reason"] == "error" else tool_calls(reply)
        for call in calls:
            yield {"type": "tool_execution_start", "call": call}
            result = run_tool(tools, call)
            yield record(result)             # no yield between the tool returning and this
            yield {"type": "tool_execution_end", "call": call, "result": result}
        yield {"type": "turn_end", "message": reply}
    yield {"type": "agent_end", "messages": new}   # the one way out, so every exit is balanced
#@ end
#@ block 9.1..10.1 gap
#@ spec
# Below is lesson 7's run_agent. Two new keyword arguments, get_steering=None and
# get_follow_ups=None: functions of no arguments that return a list of user messages, often
# empty. The loop asks for them only where a user message keeps the transcript valid:
#   - steering: once with the prompt (what it gives goes in after the prompt), and after each
#     turn, once that turn's whole tool batch is answered; what it gives opens the next turn
#   - follow-ups: only when the run would otherwise end (no calls, no steering); what they give
#     opens one more turn, and the run goes on from there
#   - after a failed reply nobody is asked anything, and the run ends
# What the loop is given is appended, each message with its message_end, at the top of the turn
# it opens. Never pass None on: a get_... that was not passed counts as one that gives [].
#@ code
def run_agent(model, system, messages, tools, prompt, *,
              max_turns=None, get_steering=None, get_follow_ups=None):
    """Put `prompt` to the model and keep going until it stops asking for tools, a reply comes
    back failed (stop_reason "error"), or `max_turns` model calls have been made (None: no limit).

    A generator of events: plain dicts with a "type", which say what happened and draw nothing.
    They come in balanced pairs on every exit: agent_start ... agent_end around the run, and
    turn_start ... turn_end around each turn. The one ordering rule is mutate, then announce: a
    message is appended to `messages` (the caller's list, the record) first, and only then is its
    message_end yielded, before anything else is appended. The final message is the last of
    agent_end's "messages".

    The user may speak during a run; the loop asks for their words only where a user message
    keeps the transcript valid. `get_steering` and `get_follow_ups` take no arguments and return a
    list of user messages, often empty: steering is asked for once a turn's whole tool batch is
    answered, follow-ups only when the run would otherwise end. The loop never sees a queue."""
    new = []  # this run's messages, for agent_end

    def record(message):
        """Append `message` to the record, then make the event that announces it."""
        messages.append(message)
        new.append(message)
        return {"type": "message_end", "message": message}

    def ask(get):
        """The user messages a callable has for us: [] if it has none, or was never passed."""
        return list(get()) if get else []

    yield {"type": "agent_start"}
    turn, calls, failed = 0, [], False
    # User messages waiting to open the next turn. Steering sent while idle goes in with the prompt.
    pending = [user_message(prompt)] + ask(get_steering)
    while pending:                           # outer loop: the prompt, then each follow-up
        while calls or pending:              # inner loop: one pass is one turn
            turn += 1
            yield {"type": "turn_start"}
            for message in pending:          # only here, at the top of a turn, may a user speak
                yield record(message)
            pending = []
            if max_turns is not None and turn > max_turns:   # checked before the call, never after
                reply = error_message(f"Agent stopped after max_turns={max_turns}")
            else:
                reply = model.complete(system, messages, tool_specs(tools))
            yield record(reply)
            # A failed reply: none of it is acted on and nobody is asked for more.
            failed = reply["stop_reason"] == "error"
            calls = [] if failed else tool_calls(reply)
            for call in calls:
                yield {"type": "tool_execution_start", "call": call}
                result = run_tool(tools, call)
                yield record(result)         # no yield between the tool returning and this
                yield {"type": "tool_execution_end", "call": call, "result": result}
            yield {"type": "turn_end", "message": reply}
            if not failed:
                pending = ask(get_steering)  # every call of the turn has its result
        if not failed:
            pending = ask(get_follow_ups)    # no calls, no steering: the run would end here
    yield {"type": "agent_end", "messages": new}   # the one way out, so every exit is balanced
#@ end
#@ block 10.1..12.2 gap
#@ spec
# Below is lesson 9's run_agent. One line changes: the model is sent context_for_model(messages),
# a view built for this one request, and never the record itself.
#@ code
def run_agent(model, system, messages, tools, prompt, *,
              max_turns=None, get_steering=None, get_follow_ups=None):
    """Put `prompt` to the model and keep going until it stops asking for tools, a reply comes
    back failed (stop_reason "error"), or `max_turns` model calls have been made (None: no limit).

    A generator of events: plain dicts with a "type", which say what happened and draw nothing.
    They come in balanced pairs on every exit: agent_start ... agent_end around the run, and
    turn_start ... turn_end around each turn. The one ordering rule is mutate, then announce: a
    message is appended to `messages` (the caller's list, the record) first, and only then is its
    message_end yielded. The final message is the last of agent_end's "messages".

    The user may speak during a run; the loop asks for their words only where a user message
    keeps the transcript valid. `get_steering` and `get_follow_ups` take no arguments and return a
    list of user messages, often empty: steering is asked for once a turn's whole tool batch is
    answered, follow-ups only when the run would otherwise end. The loop never sees a queue."""
    new = []  # this run's messages, for agent_end

    def record(message):
        """Append `message` to the record, then make the event that announces it."""
        messages.append(message)
        new.append(message)
        return {"type": "message_end", "message": message}

    def ask(get):
        """The user messages a callable has for us: [] if it has none, or was never passed."""
        return list(get()) if get else []

    yield {"type": "agent_start"}
    turn, calls, failed = 0, [], False
    # User messages waiting to open the next turn. Steering sent while idle goes in with the prompt.
    pending = [user_message(prompt)] + ask(get_steering)
    while pending:                           # outer loop: the prompt, then each follow-up
        while calls or pending:              # inner loop: one pass is one turn
            turn += 1
            yield {"type": "turn_start"}
            for message in pending:          # only here, at the top of a turn, may a user speak
                yield record(message)
            pending = []
            if max_turns is not None and turn > max_turns:   # checked before the call, never after
                reply = error_message(f"Agent stopped after max_turns={max_turns}")
            else:
                reply = model.complete(system, context_for_model(messages), tool_specs(tools))
            yield record(reply)
            # A failed reply: none of it is acted on and nobody is asked for more.
            failed = reply["stop_reason"] == "error"
            calls = [] if failed else tool_calls(reply)
            for call in calls:
                yield {"type": "tool_execution_start", "call": call}
                result = run_tool(tools, call)
                yield record(result)         # no yield between the tool returning and this
                yield {"type": "tool_execution_end", "call": call, "result": result}
            yield {"type": "turn_end", "message": reply}
            if not failed:
                pending = ask(get_steering)  # every call of the turn has its result
        if not failed:
            pending = ask(get_follow_ups)    # no calls, no steering: the run would end here
    yield {"type": "agent_end", "messages": new}   # the one way out, so every exit is balanced
#@ end
#@ block 12.2..14.1 given: prompt=None sends the record again, with no new message
def run_agent(model, system, messages, tools, prompt, *,
              max_turns=None, get_steering=None, get_follow_ups=None):
    """Put `prompt` to the model and keep going until it stops asking for tools, a reply comes
    back failed (stop_reason "error"), or `max_turns` model calls have been made (None: no limit).

    A generator of events: plain dicts with a "type", which say what happened and draw nothing.
    They come in balanced pairs on every exit: agent_start ... agent_end around the run, and
    turn_start ... turn_end around each turn. The one ordering rule is mutate, then announce: a
    message is appended to `messages` (the caller's list, the record) first, and only then is its
    message_end yielded. The final message is the last of agent_end's "messages".

    The user may speak during a run; the loop asks for their words only where a user message
    keeps the transcript valid. `get_steering` and `get_follow_ups` take no arguments and return a
    list of user messages, often empty: steering is asked for once a turn's whole tool batch is
    answered, follow-ups only when the run would otherwise end. The loop never sees a queue.

    `prompt` None is a retry: no new message, and the first turn asks the model about the record
    as it stands (lesson 12 sends a request again, once, after compacting)."""
    new = []  # this run's messages, for agent_end

    def record(message):
        """Append `message` to the record, then make the event that announces it."""
        messages.append(message)
        new.append(message)
        return {"type": "message_end", "message": message}

    def ask(get):
        """The user messages a callable has for us: [] if it has none, or was never passed."""
        return list(get()) if get else []

    yield {"type": "agent_start"}
    turn, calls, failed = 0, [], False
    # User messages waiting to open the next turn. Steering sent while idle goes in with the prompt.
    pending = ([] if prompt is None else [user_message(prompt)]) + ask(get_steering)
    retry = prompt is None                   # a retry opens its first turn with no new message
    while pending or retry:                  # outer loop: the prompt, then each follow-up
        while calls or pending or retry:     # inner loop: one pass is one turn
            retry = False
            turn += 1
            yield {"type": "turn_start"}
            for message in pending:          # only here, at the top of a turn, may a user speak
                yield record(message)
            pending = []
            if max_turns is not None and turn > max_turns:   # checked before the call, never after
                reply = error_message(f"Agent stopped after max_turns={max_turns}")
            else:
                reply = model.complete(system, context_for_model(messages), tool_specs(tools))
            yield record(reply)
            # A failed reply: none of it is acted on and nobody is asked for more.
            failed = reply["stop_reason"] == "error"
            calls = [] if failed else tool_calls(reply)
            for call in calls:
                yield {"type": "tool_execution_start", "call": call}
                result = run_tool(tools, call)
                yield record(result)         # no yield between the tool returning and this
                yield {"type": "tool_execution_end", "call": call, "result": result}
            yield {"type": "turn_end", "message": reply}
            if not failed:
                pending = ask(get_steering)  # every call of the turn has its result
        if not failed:
            pending = ask(get_follow_ups)    # no calls, no steering: the run would end here
    yield {"type": "agent_end", "messages": new}   # the one way out, so every exit is balanced
#@ end
#@ block 14.1..15.1 gap
#@ spec
# Below is lesson 12's run_agent. One branch is new: a model that has a stream() method is
# streamed. Its reply is model.stream(system, <the view>, <the tool specs>), the same three
# arguments as complete(); pass that stream to stream_reply (region 9) and take the finished
# message from it: reply = yield from stream_reply(...). Every event stream_reply yields goes out
# of the run as it comes. A model with no stream() method is asked with complete(), as before.
# Everything after that line stays: the reply is recorded once, then its message_end.
#@ code
def run_agent(model, system, messages, tools, prompt, *,
              max_turns=None, get_steering=None, get_follow_ups=None):
    """Put `prompt` to the model and keep going until it stops asking for tools, a reply comes
    back failed (stop_reason "error"), or `max_turns` model calls have been made (None: no limit).

    A generator of events: plain dicts with a "type", which say what happened and draw nothing.
    They come in balanced pairs on every exit: agent_start ... agent_end around the run, and
    turn_start ... turn_end around each turn. The one ordering rule is mutate, then announce: a
    message is appended to `messages` (the caller's list, the record) first, and only then is its
    message_end yielded. The final message is the last of agent_end's "messages".

    The user may speak during a run; the loop asks for their words only where a user message
    keeps the transcript valid. `get_steering` and `get_follow_ups` take no arguments and return a
    list of user messages, often empty: steering is asked for once a turn's whole tool batch is
    answered, follow-ups only when the run would otherwise end. The loop never sees a queue.

    `prompt` None is a retry: no new message, and the first turn asks the model about the record
    as it stands (lesson 12 sends a request again, once, after compacting).

    A model that can stream (it has a stream() method) is streamed: its reply is announced piece
    by piece with message_start and message_update, and recorded once, whole, when it is over. A
    model with only complete() is asked as before, and its reply is announced once."""
    new = []  # this run's messages, for agent_end

    def record(message):
        """Append `message` to the record, then make the event that announces it."""
        messages.append(message)
        new.append(message)
        return {"type": "message_end", "message": message}

    def ask(get):
        """The user messages a callable has for us: [] if it has none, or was never passed."""
        return list(get()) if get else []

    yield {"type": "agent_start"}
    turn, calls, failed = 0, [], False
    # User messages waiting to open the next turn. Steering sent while idle goes in with the prompt.
    pending = ([] if prompt is None else [user_message(prompt)]) + ask(get_steering)
    retry = prompt is None                   # a retry opens its first turn with no new message
    while pending or retry:                  # outer loop: the prompt, then each follow-up
        while calls or pending or retry:     # inner loop: one pass is one turn
            retry = False
            turn += 1
            yield {"type": "turn_start"}
            for message in pending:          # only here, at the top of a turn, may a user speak
                yield record(message)
            pending = []
            if max_turns is not None and turn > max_turns:   # checked before the call, never after
                reply = error_message(f"Agent stopped after max_turns={max_turns}")
            elif hasattr(model, "stream"):   # the reply comes in pieces, announced as they come
                reply = yield from stream_reply(
                    model.stream(system, context_for_model(messages), tool_specs(tools)))
            else:                                    # a model that only answers whole
                reply = model.complete(system, context_for_model(messages), tool_specs(tools))
            yield record(reply)
            # A failed reply: none of it is acted on and nobody is asked for more.
            failed = reply["stop_reason"] == "error"
            calls = [] if failed else tool_calls(reply)
            for call in calls:
                yield {"type": "tool_execution_start", "call": call}
                result = run_tool(tools, call)
                yield record(result)         # no yield between the tool returning and this
                yield {"type": "tool_execution_end", "call": call, "result": result}
            yield {"type": "turn_end", "message": reply}
            if not failed:
                pending = ask(get_steering)  # every call of the turn has its result
        if not failed:
            pending = ask(get_follow_ups)    # no calls, no steering: the run would end here
    yield {"type": "agent_end", "messages": new}   # the one way out, so every exit is balanced
#@ end
#@ block 15.1 gap
#@ spec
# Below is lesson 14's run_agent. It becomes an async generator (async def, with yield inside;
# run_tool is awaited) and takes one more keyword argument, signal=None: a CancelToken, or None.
# `reply = yield from stream_reply(...)` has no async form: step stream_reply by hand with
# next(), take the reply from StopIteration's value, and await asyncio.sleep(0) after each event
# it gives, so the rest of the program runs between pieces. Look at the token at three safe
# points, with a small function cancelled() inside run_agent:
#   - before each model call, once the turn's user messages are recorded and announced:
#     cancelled, the reply is error_message(CANCELLED_REPLY) instead of a call; it is a failed
#     reply like any other, so the run ends after it. The token is looked at before lesson 05's
#     max_turns brake: a cancelled run that is out of turns too ends with CANCELLED_REPLY
#   - between two pieces of a stream: cancelled, close the stream (no piece more is read from
#     it), and the reply is
#     finished(<the partial message>, stop_reason="error", error_message=CANCELLED_REPLY)
#   - before each tool, after its tool_execution_start is yielded: cancelled, the call's result
#     is cancelled_result(call), and the tool is not run; every call of the batch still gets its
#     one result
#   - once cancelled, ask() asks nobody: steering and follow-ups stay queued for the next run,
#     the steering queued while idle that the first turn would take included
#@ code
async def run_agent(model, system, messages, tools, prompt, *,
                    max_turns=None, get_steering=None, get_follow_ups=None, signal=None):
    """Put `prompt` to the model and keep going until it stops asking for tools, a reply comes
    back failed (stop_reason "error"), or `max_turns` model calls have been made (None: no limit).

    A generator of events: plain dicts with a "type", which say what happened and draw nothing.
    They come in balanced pairs on every exit: agent_start ... agent_end around the run, and
    turn_start ... turn_end around each turn. The one ordering rule is mutate, then announce: a
    message is appended to `messages` (the caller's list, the record) first, and only then is its
    message_end yielded. The final message is the last of agent_end's "messages".

    The user may speak during a run; the loop asks for their words only where a user message
    keeps the transcript valid. `get_steering` and `get_follow_ups` take no arguments and return a
    list of user messages, often empty: steering is asked for once a turn's whole tool batch is
    answered, follow-ups only when the run would otherwise end. The loop never sees a queue.

    `prompt` None is a retry: no new message, and the first turn asks the model about the record
    as it stands (lesson 12 sends a request again, once, after compacting).

    A model that can stream (it has a stream() method) is streamed: its reply is announced piece
    by piece with message_start and message_update, and recorded once, whole, when it is over. A
    model with only complete() is asked as before, and its reply is announced once.

    An async generator (lesson 15), so that while it waits (a slow tool, a slow model) the rest of
    the program runs, and may ask it to stop: `signal`, a CancelToken or None, is looked at at the
    run's safe points. Before a model call, a cancel gives a failed reply, CANCELLED_REPLY (the
    token is looked at before the max_turns brake), and the run ends as after any failed reply.
    Between two pieces of a streamed reply, it closes the stream, reading no more of it, and ends
    the reply there: what arrived is kept, in a failed reply with CANCELLED_REPLY. Before a tool, it
    gives the call the result CANCELLED, marked is_error, without running it. Once cancelled,
    nobody is asked for steering or follow-ups: queued words stay queued for the next run."""
    new = []  # this run's messages, for agent_end

    def record(message):
        """Append `message` to the record, then make the event that announces it."""
        messages.append(message)
        new.append(message)
        return {"type": "message_end", "message": message}

    def ask(get):
        """The user messages a callable has for us: [] if it has none, was never passed, or the
        run was cancelled (what is queued then stays queued)."""
        return list(get()) if get and not cancelled() else []

    def cancelled():
        return signal is not None and signal.cancelled

    yield {"type": "agent_start"}
    turn, calls, failed = 0, [], False
    # User messages waiting to open the next turn. Steering sent while idle goes in with the prompt.
    pending = ([] if prompt is None else [user_message(prompt)]) + ask(get_steering)
    retry = prompt is None                   # a retry opens its first turn with no new message
    while pending or retry:                  # outer loop: the prompt, then each follow-up
        while calls or pending or retry:     # inner loop: one pass is one turn
            retry = False
            turn += 1
            yield {"type": "turn_start"}
            for message in pending:          # only here, at the top of a turn, may a user speak
                yield record(message)
            pending = []
            if cancelled():                  # a safe point: before the model is asked
                reply = error_message(CANCELLED_REPLY)
            elif max_turns is not None and turn > max_turns:   # before the call, never after
                reply = error_message(f"Agent stopped after max_turns={max_turns}")
            elif hasattr(model, "stream"):   # the reply comes in pieces, announced as they come
                pieces = stream_reply(
                    model.stream(system, context_for_model(messages), tool_specs(tools)))
                reply = None
                while reply is None:         # `yield from` has no async form: step it by hand
                    try:
                        event = next(pieces)
                    except StopIteration as end:
                        reply = end.value
                        break
                    yield event
                    await asyncio.sleep(0)   # the rest of the program runs between pieces
                    if cancelled():          # a safe point: between two pieces
                        pieces.close()
                        reply = finished(event["message"], stop_reason="error",
                                         error_message=CANCELLED_REPLY)
            else:                                    # a model that only answers whole
                reply = model.complete(system, context_for_model(messages), tool_specs(tools))
            yield record(reply)
            # A failed reply: none of it is acted on and nobody is asked for more.
            failed = reply["stop_reason"] == "error"
            calls = [] if failed else tool_calls(reply)
            for call in calls:
                yield {"type": "tool_execution_start", "call": call}
                if cancelled():              # a safe point: before each tool
                    result = cancelled_result(call)
                else:
                    result = await run_tool(tools, call, signal)
                yield record(result)         # no yield between the tool returning and this
                yield {"type": "tool_execution_end", "call": call, "result": result}
            yield {"type": "turn_end", "message": reply}
            if not failed:
                pending = ask(get_steering)  # every call of the turn has its result
        if not failed:
            pending = ask(get_follow_ups)    # no calls, no steering: the run would end here
    yield {"type": "agent_end", "messages": new}   # the one way out, so every exit is balanced
#@ end
#@ block 15.1 given


CANCELLED_REPLY = "Cancelled: the run was stopped from outside."
CANCELLED = "Cancelled before it ran: the run was stopped from outside."


def cancelled_result(call):
    """The result of a call the run did not start because it was cancelled: an error, since the
    tool did not do its job, in words that say it did not run at all (unlike INTERRUPTED)."""
    return {"role": "toolResult", "tool_call_id": call["id"], "tool_name": call["name"],
            "content": CANCELLED, "is_error": True}
#@ end
#@ block 15.1 gap
#@ spec
# Spec only. The tests import one name here: CancelToken.
#
# CancelToken()   a flag that one part of the program sets and a run reads
#   .cancel()     sets it. Calling it again changes nothing; it never raises
#   .cancelled    True once cancel() was called: a read-only property, never reset
#@ code


class CancelToken:
    """A request to stop, from outside the run. Setting it does nothing by itself: the run looks
    at it at its safe points, and leaves from the first one with its record valid. It is never
    reset: a new run gets a new token, so an old cancel can never stop it."""

    def __init__(self):
        self._cancelled = False

    def cancel(self):
        self._cancelled = True

    @property
    def cancelled(self):
        return self._cancelled
#@ end
#@ block 10.1 gap
#@ spec
# Spec only. The tests import one name here: context_for_model.
#
# context_for_model(messages) -> list   what the model is sent, built for every request. The
#     record keeps what happened; this is a transcript a provider accepts. Leave out assistant
#     messages that failed and are empty (stop_reason "error" and no content: a failed reply
#     that got something out stays in), then pass the rest through repair_tool_history.
#     A new list, every time; the record is never changed.
#@ code


def context_for_model(messages):
    """What the model is sent. The record is not the view: the record keeps what happened, and
    this builds, for every request, a transcript a provider accepts. Assistant messages that
    failed and are empty are left out (a failed reply that got something out stays in), and then
    the calls and results are paired up. Returns a new list; the record is never changed."""
    kept = [m for m in messages if not (m["role"] == "assistant" and not m["content"]
                                        and m.get("stop_reason") == "error")]
    return repair_tool_history(kept)
#@ end
#@ block 10.1 given


INTERRUPTED = ("Tool call interrupted: no result was recorded. It may not have run, or may have "
               "run partly; check before repeating it.")
#@ end
#@ block 10.1 gap
#@ spec
# Spec only. The tests import one name here: repair_tool_history.
#
# repair_tool_history(messages) -> list   a new list in which every tool call of an assistant
#     message is followed at once, in call order, by exactly one toolResult for it:
#     - a recorded result is kept, and moved to its place; of two for one call the first wins
#       (the earlier in the list, even if it stands before the call)
#     - a result whose call is nowhere is dropped: nobody knows that call's arguments
#     - every message that is not a toolResult stays, in its order (a failed reply too)
#     - a call with no result gets {"role": "toolResult", "tool_call_id": <the call's id>,
#       "tool_name": <its name>, "content": INTERRUPTED, "is_error": True}
#     Pure and idempotent: the same message objects, never copies, and a list that is valid
#     already comes back equal to itself. Call ids are unique.
#@ code


def repair_tool_history(messages):
    """A copy of `messages` in which every tool call is followed at once by exactly one result,
    in call order. A recorded result is kept and moved to its place; of two for one call the first
    wins; a result whose call is nowhere is dropped (nobody knows the arguments of the call, so it
    cannot be invented); a call with no result gets INTERRUPTED, marked is_error. Pure and
    idempotent: a new list of the same message objects, equal to a valid input. Call ids are taken
    to be unique."""
    recorded = {}  # call id -> the first result recorded for it
    for m in messages:
        if m["role"] == "toolResult":
            recorded.setdefault(m["tool_call_id"], m)
    repaired = []
    for m in messages:
        if m["role"] == "toolResult":
            continue  # results are put back below, after their call
        repaired.append(m)
        if m["role"] == "assistant":
            for call in tool_calls(m):
                repaired.append(recorded.get(call["id"]) or {
                    "role": "toolResult", "tool_call_id": call["id"], "tool_name": call["name"],
                    "content": INTERRUPTED, "is_error": True})
    return repaired
#@ end
#@ block 8.1 given


# == 4 harness ==
# One transcript, one writer. The loop keeps the mechanics and stays stateless; this holds the list.

#@ end
#@ block 8.1..9.1 given
class Harness:
    """Owns the one transcript, and the settings that stay the same from run to run, and lets one
    run at a time write to it.

    Harness(model, system, tools, messages=(), max_turns=None) copies `messages` into a list of
    its own.
      .messages      a tuple, a snapshot of the transcript: nobody outside can append to it or
                     pop from it. (The dicts inside are not copied.)
      .is_running    True from the call of prompt() until that run is exhausted.
      .prompt(text)  returns the run: run_agent's events, over the harness's own list. While a
                     run is going on it raises RuntimeError("already running"), and it raises
                     on the caller's line, so prompt is a plain def and the generator is _run."""
#@ end
#@ block 9.1..10.1 given: the docstring's words on steer and follow_up
class Harness:
    """Owns the one transcript, and the settings that stay the same from run to run, and lets one
    run at a time write to it.

    Harness(model, system, tools, messages=(), max_turns=None) copies `messages` into a list of
    its own.
      .messages      a tuple, a snapshot of the transcript: nobody outside can append to it or
                     pop from it. (The dicts inside are not copied.)
      .is_running    True from the call of prompt() until that run is exhausted.
      .prompt(text)  returns the run: run_agent's events, over the harness's own list. While a
                     run is going on it raises RuntimeError("already running; use steer() or
                     follow_up()"), and it raises on the caller's line, so prompt is a plain def
                     and the generator is _run.
      .steer(text), .follow_up(text)
                     queue a user message: steer for the next gap between turns ("use spaces"),
                     follow_up for when the run would otherwise end ("now run the tests").
                     Callable at any time, by anyone. A queued message is not history until the
                     loop asks for it, one message per ask. Queues outlive runs."""
#@ end
#@ block 10.1..11.2 given: the docstring's words on is_running
class Harness:
    """Owns the one transcript, and the settings that stay the same from run to run, and lets one
    run at a time write to it.

    Harness(model, system, tools, messages=(), max_turns=None) copies `messages` into a list of
    its own.
      .messages      a tuple, a snapshot of the transcript: nobody outside can append to it or
                     pop from it. (The dicts inside are not copied.)
      .is_running    True from the call of prompt() until that run is exhausted, closed or dies.
      .prompt(text)  returns the run: run_agent's events, over the harness's own list. While a
                     run is going on it raises RuntimeError("already running; use steer() or
                     follow_up()"), and it raises on the caller's line, so prompt is a plain def
                     and the generator is _run.
      .steer(text), .follow_up(text)
                     queue a user message: steer for the next gap between turns ("use spaces"),
                     follow_up for when the run would otherwise end ("now run the tests").
                     Callable at any time, by anyone. A queued message is not history until the
                     loop asks for it, one message per ask. Queues outlive runs."""
#@ end
#@ block 11.2..15.1 given: the docstring's words on subscribe
class Harness:
    """Owns the one transcript, and the settings that stay the same from run to run, and lets one
    run at a time write to it.

    Harness(model, system, tools, messages=(), max_turns=None) copies `messages` into a list of
    its own.
      .messages      a tuple, a snapshot of the transcript: nobody outside can append to it or
                     pop from it. (The dicts inside are not copied.)
      .is_running    True from the call of prompt() until that run is exhausted, closed or dies.
      .prompt(text)  returns the run: run_agent's events, over the harness's own list. While a
                     run is going on it raises RuntimeError("already running; use steer() or
                     follow_up()"), and it raises on the caller's line, so prompt is a plain def
                     and the generator is _run.
      .steer(text), .follow_up(text)
                     queue a user message: steer for the next gap between turns ("use spaces"),
                     follow_up for when the run would otherwise end ("now run the tests").
                     Callable at any time, by anyone. A queued message is not history until the
                     loop asks for it, one message per ask. Queues outlive runs.
      .subscribe(listener)
                     listener(event) hears every event of every run, after the record has
                     changed and before the run's consumer is handed the event. Returns the
                     function that undoes it. A listener that raises ends the run: listeners are
                     trusted code, and a saver that cannot save must not be silent."""
#@ end
#@ block 15.1..15.2 given: the docstring's words on prompt
class Harness:
    """Owns the one transcript, and the settings that stay the same from run to run, and lets one
    run at a time write to it.

    Harness(model, system, tools, messages=(), max_turns=None) copies `messages` into a list of
    its own.
      .messages      a tuple, a snapshot of the transcript: nobody outside can append to it or
                     pop from it. (The dicts inside are not copied.)
      .is_running    True from the call of prompt() until that run is exhausted, closed or dies.
      .prompt(text)  returns the run: run_agent's events, over the harness's own list, as an
                     async generator (async for event in h.prompt(text)). While a run is going on
                     it raises RuntimeError("already running; use steer() or follow_up()"), and
                     it raises on the caller's line, so prompt is a plain def and the async
                     generator is _run.
      .steer(text), .follow_up(text)
                     queue a user message: steer for the next gap between turns ("use spaces"),
                     follow_up for when the run would otherwise end ("now run the tests").
                     Callable at any time, by anyone. A queued message is not history until the
                     loop asks for it, one message per ask. Queues outlive runs.
      .subscribe(listener)
                     listener(event) hears every event of every run, after the record has
                     changed and before the run's consumer is handed the event. Returns the
                     function that undoes it. A listener that raises ends the run: listeners are
                     trusted code, and a saver that cannot save must not be silent."""
#@ end
#@ block 15.2 given: the docstring's words on cancel
class Harness:
    """Owns the one transcript, and the settings that stay the same from run to run, and lets one
    run at a time write to it.

    Harness(model, system, tools, messages=(), max_turns=None) copies `messages` into a list of
    its own.
      .messages      a tuple, a snapshot of the transcript: nobody outside can append to it or
                     pop from it. (The dicts inside are not copied.)
      .is_running    True from the call of prompt() until that run is exhausted, closed or dies.
      .prompt(text)  returns the run: run_agent's events, over the harness's own list, as an
                     async generator (async for event in h.prompt(text)). While a run is going on
                     it raises RuntimeError("already running; use steer() or follow_up()"), and
                     it raises on the caller's line, so prompt is a plain def and the async
                     generator is _run.
      .steer(text), .follow_up(text)
                     queue a user message: steer for the next gap between turns ("use spaces"),
                     follow_up for when the run would otherwise end ("now run the tests").
                     Callable at any time, by anyone. A queued message is not history until the
                     loop asks for it, one message per ask. Queues outlive runs.
      .subscribe(listener)
                     listener(event) hears every event of every run, after the record has
                     changed and before the run's consumer is handed the event. Returns the
                     function that undoes it. A listener that raises ends the run: listeners are
                     trusted code, and a saver that cannot save must not be silent.
      .cancel()      asks the run going on to stop at its next safe point. Callable at any time,
                     by anyone; idle, it does nothing, and a second call changes nothing. Each
                     run has a token of its own, so a cancel never reaches the next run.
                     A run stopped from outside (by cancel(), or by cancelling the task that runs
                     it) leaves every call it recorded with a result in the record: CANCELLED
                     for a call of the run whose tool never started (a call still streaming
                     when the stop came, or one queued behind the tool that was cut),
                     INTERRUPTED for one cut short or from before the run; the listeners hear
                     each one as a message_end."""
#@ end

#@ block 8.1..9.1 gap
#@ spec
    # Spec: the docstring above. The tests import one name: Harness.
    #
    # Keep the transcript in a list of your own, self._messages, and hand run_agent that very
    # list, so the record it appends to is the harness's. prompt(text) checks and sets the
    # running flag and returns self._run(text). _run is the generator: it yields run_agent's
    # events and clears the flag when the run is exhausted. prompt must not be a generator
    # itself: its check would wait for the first next(), and a second prompt() would not raise.
    # An exception run_agent lets out (a model call that raises) goes up to whoever pulls the
    # run: the harness catches nothing.
#@ code
    def __init__(self, model, system, tools, messages=(), max_turns=None):
        self._model, self._system, self._tools = model, system, list(tools)
        self._messages, self._max_turns = list(messages), max_turns
        self._running = False

    @property
    def messages(self):
        return tuple(self._messages)

    @property
    def is_running(self):
        return self._running

    def prompt(self, text):
        if self._running:  # checked now, not at the first next()
            raise RuntimeError("already running")
        self._running = True
        return self._run(text)

    def _run(self, text):
        for event in run_agent(self._model, self._system, self._messages, self._tools, text,
                               max_turns=self._max_turns):
            yield event
        self._running = False
#@ end
#@ block 9.1..10.1 gap
#@ spec
    # Below is lesson 8's Harness. New, as the docstring says:
    #   - two queues, made in __init__ with deque(): steering and follow-ups
    #   - steer(text) and follow_up(text) append user_message(text) to their queue
    #   - _drain(queue) -> list: [the oldest message], taken off the queue, or [] if it is empty
    #   - _run hands run_agent get_steering and get_follow_ups: functions of no arguments, each
    #     draining its own queue. The loop asks them; it never sees a queue
    #   - while a run is going on, prompt raises
    #     RuntimeError("already running; use steer() or follow_up()")
#@ code
    def __init__(self, model, system, tools, messages=(), max_turns=None):
        self._model, self._system, self._tools = model, system, list(tools)
        self._messages, self._max_turns = list(messages), max_turns
        self._running = False
        self._steering, self._follow_ups = deque(), deque()

    @property
    def messages(self):
        return tuple(self._messages)

    @property
    def is_running(self):
        return self._running

    def prompt(self, text):
        if self._running:  # checked now, not at the first next()
            raise RuntimeError("already running; use steer() or follow_up()")
        self._running = True
        return self._run(text)

    def steer(self, text):
        self._steering.append(user_message(text))

    def follow_up(self, text):
        self._follow_ups.append(user_message(text))

    def _drain(self, queue):
        """What the loop is handed when it asks: the oldest queued message, one at a time."""
        return [queue.popleft()] if queue else []

    def _run(self, text):
        run = run_agent(self._model, self._system, self._messages, self._tools, text,
                        max_turns=self._max_turns,
                        get_steering=lambda: self._drain(self._steering),
                        get_follow_ups=lambda: self._drain(self._follow_ups))
        for event in run:
            yield event
        self._running = False
#@ end
#@ block 10.1..11.2 gap
#@ spec
    # Below is lesson 9's Harness. One change, in _run. A consumer may stop pulling at any event
    # and close the run, and a run may die of an exception; either way the harness must be idle
    # again, or it refuses every prompt after. Keep run_agent's generator in a variable, loop
    # over it inside try, and in finally close it (run.close()) and then clear the running flag.
#@ code
    def __init__(self, model, system, tools, messages=(), max_turns=None):
        self._model, self._system, self._tools = model, system, list(tools)
        self._messages, self._max_turns = list(messages), max_turns
        self._running = False
        self._steering, self._follow_ups = deque(), deque()

    @property
    def messages(self):
        return tuple(self._messages)

    @property
    def is_running(self):
        return self._running

    def prompt(self, text):
        if self._running:  # checked now, not at the first next()
            raise RuntimeError("already running; use steer() or follow_up()")
        self._running = True
        return self._run(text)

    def steer(self, text):
        self._steering.append(user_message(text))

    def follow_up(self, text):
        self._follow_ups.append(user_message(text))

    def _drain(self, queue):
        """What the loop is handed when it asks: the oldest queued message, one at a time."""
        return [queue.popleft()] if queue else []

    def _run(self, text):
        run = run_agent(self._model, self._system, self._messages, self._tools, text,
                        max_turns=self._max_turns,
                        get_steering=lambda: self._drain(self._steering),
                        get_follow_ups=lambda: self._drain(self._follow_ups))
        try:
            for event in run:
                yield event
        finally:  # exhausted, closed by the consumer, or dead
            run.close()
            self._running = False
#@ end
#@ block 11.2..15.1 gap
#@ spec
    # Below is lesson 9's Harness. About 15 new lines, in three places:
    #   - __init__: a list of listeners, empty to start with
    #   - subscribe(self, listener): as the docstring says. The function it returns takes this
    #     subscription off the list and no other, even when the same function is subscribed
    #     twice, and calling it a second time does nothing
    #   - _run: every listener is called with each event, and then the event is yielded. Put the
    #     calling in _notify(self, event). A listener may unsubscribe while it is being called
    #     (itself, or another one), and its neighbours must still hear that event
#@ code
    def __init__(self, model, system, tools, messages=(), max_turns=None):
        self._model, self._system, self._tools = model, system, list(tools)
        self._messages, self._max_turns = list(messages), max_turns
        self._running = False
        self._steering, self._follow_ups = deque(), deque()
        self._listeners = []

    @property
    def messages(self):
        return tuple(self._messages)

    @property
    def is_running(self):
        return self._running

    def prompt(self, text):
        if self._running:  # checked now, not at the first next()
            raise RuntimeError("already running; use steer() or follow_up()")
        self._running = True
        return self._run(text)

    def steer(self, text):
        self._steering.append(user_message(text))

    def follow_up(self, text):
        self._follow_ups.append(user_message(text))

    def subscribe(self, listener):
        def subscription(event):  # a new function on every call: this subscription, no other
            listener(event)
        self._listeners.append(subscription)

        def unsubscribe():  # a function equals only itself, so this finds its own, or nothing
            if subscription in self._listeners:
                self._listeners.remove(subscription)
        return unsubscribe

    def _notify(self, event):
        for listener in list(self._listeners):  # a copy: a listener may unsubscribe mid-walk
            listener(event)

    def _drain(self, queue):
        """What the loop is handed when it asks: the oldest queued message, one at a time."""
        return [queue.popleft()] if queue else []

    def _run(self, text):
        run = run_agent(self._model, self._system, self._messages, self._tools, text,
                        max_turns=self._max_turns,
                        get_steering=lambda: self._drain(self._steering),
                        get_follow_ups=lambda: self._drain(self._follow_ups))
        try:
            for event in run:
                self._notify(event)  # the listeners first: a consumer may never ask again
                yield event
        finally:  # exhausted, closed by the consumer, or dead
            run.close()
            self._running = False
#@ end
#@ block 15.1..15.2 given
    def __init__(self, model, system, tools, messages=(), max_turns=None):
        self._model, self._system, self._tools = model, system, list(tools)
        self._messages, self._max_turns = list(messages), max_turns
        self._running = False
        self._steering, self._follow_ups = deque(), deque()
        self._listeners = []

    @property
    def messages(self):
        return tuple(self._messages)

    @property
    def is_running(self):
        return self._running

    def prompt(self, text):
        if self._running:  # checked now, not at the first step of the run
            raise RuntimeError("already running; use steer() or follow_up()")
        self._running = True
        return self._run(text)

    def steer(self, text):
        self._steering.append(user_message(text))

    def follow_up(self, text):
        self._follow_ups.append(user_message(text))

    def subscribe(self, listener):
        def subscription(event):  # a new function on every call: this subscription, no other
            listener(event)
        self._listeners.append(subscription)

        def unsubscribe():  # a function equals only itself, so this finds its own, or nothing
            if subscription in self._listeners:
                self._listeners.remove(subscription)
        return unsubscribe

    def _notify(self, event):
        for listener in list(self._listeners):  # a copy: a listener may unsubscribe mid-walk
            listener(event)

    def _drain(self, queue):
        """What the loop is handed when it asks: the oldest queued message, one at a time."""
        return [queue.popleft()] if queue else []

    async def _run(self, text):
        run = run_agent(self._model, self._system, self._messages, self._tools, text,
                        max_turns=self._max_turns,
                        get_steering=lambda: self._drain(self._steering),
                        get_follow_ups=lambda: self._drain(self._follow_ups))
        try:
            async for event in run:
                self._notify(event)  # the listeners first: a consumer may never ask again
                yield event
        finally:  # exhausted, closed by the consumer, or dead
            await run.aclose()
            self._running = False
#@ end
#@ block 15.2 gap
#@ spec
    # Below is the Harness lesson 15.1 made async. It gets cancel():
    #   - prompt(text) stays a plain def (its check raises on the caller's line); it makes the
    #     run's own CancelToken, keeps it in self._token, and returns self._run(text, token)
    #   - cancel(): cancel self._token if a run is going on; idle, do nothing. It only asks: the
    #     run is still running (is_running True, prompt() refused) until it has ended
    #   - _run hands run_agent signal=token
    #   - an asyncio.CancelledError coming through _run (its task was cancelled) cancels the
    #     token too, and goes on up: catch it, token.cancel(), raise
    #   - _run keeps a set, unstarted: the ids of this run's calls whose tool has not started.
    #     An assistant message_end adds its calls' ids (a failed reply's too: its calls never
    #     run). A tool starts only when the run is asked for the event after its
    #     tool_execution_start, so the id leaves the set after that event's yield returns, not
    #     before: a run closed or cancelled at that yield never started the tool
    #   - _close_calls(unstarted=()) -> list, yours to write: for every call id in the record's
    #     assistant messages that no toolResult answers, in record order, append at the end of
    #     the record cancelled_result(call) if the id is in unstarted (its tool never started),
    #     else {"role": "toolResult", "tool_call_id": id, "tool_name": the call's name,
    #     "content": INTERRUPTED, "is_error": True} (its tool was cut short, or the call is from
    #     before this run, and nobody knows); each id once, even if two replies made a call with
    #     that id; return the list of messages it appended ([] if none)
    #   - _run's finally, however the run ended: await run.aclose(); then, if the token is
    #     cancelled, self._close_calls(unstarted), and each message it appended is announced to
    #     the listeners as a message_end and nothing else (nobody may be left to consume it;
    #     no made-up agent_end or turn_end), with no try
    #     around them: a listener's exception goes up in place of the CancelledError (a saver
    #     that cannot save must not be silent); last, even if a listener raised,
    #     self._token = None and the running flag is cleared. A run that ended any other way
    #     (finished, failed, raised, closed by its consumer) adds nothing
#@ code
    def __init__(self, model, system, tools, messages=(), max_turns=None):
        self._model, self._system, self._tools = model, system, list(tools)
        self._messages, self._max_turns = list(messages), max_turns
        self._running = False
        self._steering, self._follow_ups = deque(), deque()
        self._listeners = []
        self._token = None                   # the running run's CancelToken; None when idle

    @property
    def messages(self):
        return tuple(self._messages)

    @property
    def is_running(self):
        return self._running

    def prompt(self, text):
        if self._running:  # checked now, not at the first step of the run
            raise RuntimeError("already running; use steer() or follow_up()")
        self._running = True
        self._token = CancelToken()          # this run's own: an old cancel cannot reach it
        return self._run(text, self._token)

    def cancel(self):
        if self._token is not None:
            self._token.cancel()

    def steer(self, text):
        self._steering.append(user_message(text))

    def follow_up(self, text):
        self._follow_ups.append(user_message(text))

    def subscribe(self, listener):
        def subscription(event):  # a new function on every call: this subscription, no other
            listener(event)
        self._listeners.append(subscription)

        def unsubscribe():  # a function equals only itself, so this finds its own, or nothing
            if subscription in self._listeners:
                self._listeners.remove(subscription)
        return unsubscribe

    def _notify(self, event):
        for listener in list(self._listeners):  # a copy: a listener may unsubscribe mid-walk
            listener(event)

    def _drain(self, queue):
        """What the loop is handed when it asks: the oldest queued message, one at a time."""
        return [queue.popleft()] if queue else []

    def _close_calls(self, unstarted=()):
        """Answer every recorded call that has no result, and return what was added: CANCELLED
        for an id in `unstarted` (its tool never started), INTERRUPTED for any other."""
        answered = {m["tool_call_id"] for m in self._messages if m["role"] == "toolResult"}
        added = []
        for message in list(self._messages):
            for call in tool_calls(message) if message["role"] == "assistant" else []:
                if call["id"] not in answered:
                    answered.add(call["id"])
                    if call["id"] in unstarted:      # it never ran: say so
                        added.append(cancelled_result(call))
                    else:                            # cut short, or from before: it may have run
                        added.append({"role": "toolResult", "tool_call_id": call["id"],
                                      "tool_name": call["name"], "content": INTERRUPTED,
                                      "is_error": True})
        self._messages.extend(added)
        return added

    async def _run(self, text, token):
        run = run_agent(self._model, self._system, self._messages, self._tools, text,
                        max_turns=self._max_turns, signal=token,
                        get_steering=lambda: self._drain(self._steering),
                        get_follow_ups=lambda: self._drain(self._follow_ups))
        unstarted = set()                # this run's calls whose tool has not started
        try:
            async for event in run:
                if event["type"] == "message_end" and event["message"]["role"] == "assistant":
                    unstarted.update(call["id"] for call in tool_calls(event["message"]))
                self._notify(event)  # the listeners first: a consumer may never ask again
                yield event
                if event["type"] == "tool_execution_start":   # asked for more: the tool starts
                    unstarted.discard(event["call"]["id"])     # (or the loop answers CANCELLED)
        except asyncio.CancelledError:   # the task that runs this was cancelled: stop, as asked
            token.cancel()
            raise
        finally:  # exhausted, cancelled, closed by the consumer, its task cancelled, or dead
            try:
                await run.aclose()
                if token.cancelled:      # stopped from outside: no call is left without a result
                    for message in self._close_calls(unstarted):   # no consumer may be left
                        self._notify({"type": "message_end", "message": message})
            finally:                     # idle again, even if a listener raised
                self._token = None
                self._running = False
#@ end
#@ block 7.1 given


# == 5 frontends ==
# A frontend is a fold over the events of one run: render(event) for each event, then finish(),
# which says whether the run ended well. The loop never learns what its events look like.

#@ end
#@ block 7.1 given
class JsonRenderer:
    """Every event as one line of JSON, for another program to read."""

    def __init__(self):
        self.failed = False

    def render(self, event):
        print(json.dumps(event))
        if event["type"] == "message_end" and event["message"].get("stop_reason") == "error":
            self.failed = True

    def finish(self):
        return not self.failed
#@ end
#@ block 7.1 gap
#@ spec
# Spec only. The tests import one name here: FinalTextRenderer.
#
# FinalTextRenderer() is the frontend for `> answer.txt`: only the answer, nothing while the run
# goes on. render(event) prints nothing; it keeps the message of the newest message_end whose
# message is an assistant's. finish() then
#   - if it failed (stop_reason "error"), prints f"Error: {its error_message}" and returns False
#   - if there was none, or it asks for tools (the run was left before its answer), prints
#     nothing and returns False
#   - otherwise it is the answer: prints text_of it and returns True
#@ code


class FinalTextRenderer:
    """Only the answer, for `> answer.txt`: nothing is printed while the run goes on. The answer
    is the newest assistant message, if it asks for no tools. finish() prints its text and
    returns True; if that message failed (stop_reason "error") it prints "Error: <its
    error_message>" instead and returns False. A run left before its answer (the newest reply
    asked for tools, or there was none) gets nothing printed and False: it did not end well."""

    def __init__(self):
        self.last = None  # the newest assistant message seen so far

    def render(self, event):
        if event["type"] == "message_end" and event["message"]["role"] == "assistant":
            self.last = event["message"]

    def finish(self):
        if self.last is None:
            return False
        if self.last["stop_reason"] == "error":
            print(f"Error: {self.last['error_message']}")
            return False
        if tool_calls(self.last):    # it asked for tools: the consumer left before the answer
            return False
        print(text_of(self.last))
        return True
#@ end
#@ block 14.2 gap
#@ spec
# Spec only (see region 9 for the other two names of lab 14.2).
#
# TerminalRenderer() is the frontend for a person at a terminal: the reply's words as they come.
#   render(event)
#     - a message_update whose piece is text: print the piece's text with no newline after it,
#       flush=True (a word held back in a buffer is a word the user does not see)
#     - a tool_execution_start: print f"[{the call's name}]" on a line of its own
#     - a message_end of an assistant message: if pieces of it were printed, end their line
#       (print()); if none were (a model that answers whole), print text_of(it), when it has any.
#       Never print a streamed text a second time. If it failed, then print
#       f"Error: {its error_message}"
#     - anything else: nothing
#   finish() returns False if there was no assistant message or the last one failed, else True;
#   it prints nothing.
#@ code


class TerminalRenderer:
    """The words as they come, for a person watching: each text piece printed the moment it
    arrives, a line for each tool that starts, and a failure said in words. A streamed text is
    printed once, piece by piece; only a reply that came whole is printed whole."""

    def __init__(self):
        self.last = None        # the newest assistant message
        self.open = False       # pieces printed on a line not yet ended

    def render(self, event):
        if event["type"] == "message_update" and event["piece"]["type"] == "text":
            print(event["piece"]["text"], end="", flush=True)
            self.open = True
        elif event["type"] == "tool_execution_start":
            print(f"[{event['call']['name']}]")
        elif event["type"] == "message_end" and event["message"]["role"] == "assistant":
            self.last = event["message"]
            if self.open:
                print()
                self.open = False
            elif text_of(self.last):
                print(text_of(self.last))
            if self.last["stop_reason"] == "error":
                print(f"Error: {self.last['error_message']}")

    def finish(self):
        return self.last is not None and self.last["stop_reason"] != "error"
#@ end
#@ block 11.1 given


# == 6 environment ==
# What a session needs around the harness, starting with a disk. Regions 3 and 4 know none of it.

#@ end
#@ block 11.1..12.1 gap
#@ spec
# Spec only. The tests import one name: SessionLog.
#
# SessionLog(ws, path) is a session on disk. `ws` is a workspace, the disk your tools already use
# (ws.exists, ws.read_text, ws.append_text), and `path` names a file in it. The file holds one
# JSON object per line, one line per message, and a line, once written, is never touched again:
#     {"id": "e1", "type": "message", "message": {"role": "user", "content": "Hi"}}
#
#   .append_message(message) -> str   appends one line with ws.append_text and returns its id:
#                     "e" + the number of that line, so "e1", "e2", ... The number is counted by
#                     re-reading the file. A SessionLog keeps no state but `ws` and `path`, so two
#                     of them over one file cannot disagree.
#   .entries() -> list[dict]          every entry, oldest first; [] if there is no file yet
#                     (reading never creates one). A line that is not JSON, the torn last line
#                     of a power cut, raises
#                         ValueError(f"{path}, line {n}: not a complete log entry")
#                     with n counted from 1. It is never skipped, and append_message refuses in
#                     the same way, writing nothing, while the log is in that state.
#   .rows() -> list[tuple]            (entry id, message) for each message, in order
#   .replay() -> list[dict]           the messages, in order: the transcript
#
# Nothing here is a special "load" or "resume". To resume a session is to write
#     Harness(model, system, tools, messages=log.replay())
#@ code
class SessionLog:
    """A session on disk: the file `path` in the workspace `ws`, one JSON object per line, one
    line per message: {"id": "e1", "type": "message", "message": {...}}. Lines are appended and
    never edited. The log is the truth and the transcript is what replay() makes of it, so
    resuming is Harness(..., messages=log.replay()). Holds no state but `ws` and `path`."""

    def __init__(self, ws, path):
        self.ws, self.path = ws, path

    def entries(self):
        """Every entry, oldest first; [] if there is no file yet. A line that is not JSON (a torn
        write) raises ValueError naming its line number. It is never skipped: the next append
        would be glued onto it, and both entries lost."""
        text = self.ws.read_text(self.path) if self.ws.exists(self.path) else ""
        entries = []
        for number, line in enumerate(text.splitlines(), 1):
            try:
                entries.append(json.loads(line))
            except ValueError:
                raise ValueError(f"{self.path}, line {number}: not a complete log entry") from None
        return entries

    def append_message(self, message):
        """Append one message as one line and return its entry id, "e" + its line number. The
        number is counted by re-reading the file, so two logs over one file cannot disagree."""
        entry = {"id": f"e{len(self.entries()) + 1}", "type": "message", "message": message}
        self.ws.append_text(self.path, json.dumps(entry) + "\n")
        return entry["id"]

    def rows(self):
        """(entry id, message) for every message of the transcript, in order."""
        return [(entry["id"], entry["message"]) for entry in self.entries()
                if entry["type"] == "message"]

    def replay(self):
        """The transcript: the state is computed from what happened, never saved."""
        return [message for _, message in self.rows()]
#@ end
#@ block 12.1 gap
#@ spec
# Below is lesson 11's SessionLog. The log learns a second kind of entry, and replay obeys it:
#     {"id": "e9", "type": "compaction", "summary": "## Goal ...", "replaces": ["e1", ..., "e6"]}
#   .append_compaction(summary, replaces) -> str   appends one such line, in the same way and with
#                     the same ids as append_message, and returns its id. Lines already written are
#                     never touched: the replaced entries stay in the file. A summary that is empty
#                     (or only spaces) raises ValueError, and so does an empty `replaces`; either
#                     way nothing is written.
#   .rows()           a compaction entry takes effect where it stands in the file: the rows built
#                     so far whose ids are in `replaces` go, and one row (the compaction's id,
#                     user_message(SUMMARY_PREFIX + summary)) takes the place of the first of them
#                     in the rows' order (whatever the order of `replaces`). Rows after them stay
#                     where they were. A compaction that names none of the
#                     rows so far puts its row after them, where it stands; it never reaches a
#                     message written after it. An entry of any other type is skipped: rows()
#                     obeys "message" and "compaction" only. replay() is still the messages of
#                     rows().
#@ code
class SessionLog:
    """A session on disk: the file `path` in the workspace `ws`, one JSON object per line, one
    line per entry. A message entry holds a message; a compaction entry holds a summary and the
    ids of the entries it replaces. Lines are appended and never edited. The log is the truth and
    the transcript is what replay() makes of it, so resuming is Harness(..., messages=log.replay()).
    Holds no state but `ws` and `path`."""

    def __init__(self, ws, path):
        self.ws, self.path = ws, path

    def entries(self):
        """Every entry, oldest first; [] if there is no file yet. A line that is not JSON (a torn
        write) raises ValueError naming its line number. It is never skipped: the next append
        would be glued onto it, and both entries lost."""
        text = self.ws.read_text(self.path) if self.ws.exists(self.path) else ""
        entries = []
        for number, line in enumerate(text.splitlines(), 1):
            try:
                entries.append(json.loads(line))
            except ValueError:
                raise ValueError(f"{self.path}, line {number}: not a complete log entry") from None
        return entries

    def _append(self, kind, **fields):
        """Append one entry as one line and return its id, "e" + its line number, counted by
        re-reading the file, so two logs over one file cannot disagree."""
        entry = {"id": f"e{len(self.entries()) + 1}", "type": kind, **fields}
        self.ws.append_text(self.path, json.dumps(entry) + "\n")
        return entry["id"]

    def append_message(self, message):
        """Append one message; returns its entry id."""
        return self._append("message", message=message)

    def append_compaction(self, summary, replaces):
        """Append a summary that stands in for the entries `replaces` names. The replaced lines
        stay in the file: a compaction is one more thing that happened, not an edit."""
        if not summary.strip():
            raise ValueError("an empty summary cannot replace anything")
        if not replaces:
            raise ValueError("a compaction must name the entries it replaces")
        return self._append("compaction", summary=summary, replaces=list(replaces))

    def rows(self):
        """(entry id, message) for every message of the transcript, in order. A compaction puts
        its summary, as a user message, where the first entry it replaces was."""
        rows = []
        for entry in self.entries():
            if entry["type"] == "message":
                rows.append((entry["id"], entry["message"]))
            elif entry["type"] == "compaction":
                gone = set(entry["replaces"])
                at = next((n for n, (row_id, _) in enumerate(rows) if row_id in gone), len(rows))
                summary = (entry["id"], user_message(SUMMARY_PREFIX + entry["summary"]))
                rows = rows[:at] + [summary] + [row for row in rows[at:] if row[0] not in gone]
        return rows

    def replay(self):
        """The transcript: the state is computed from what happened, never saved."""
        return [message for _, message in self.rows()]
#@ end
#@ block S2.1 given


# -- the session tree (side quest S2) --
# One file, many conversations: each entry names its parent, and the last line says where you are.
# Going back is a line that points; nothing written is ever rewritten.

#@ end
#@ block S2.1 gap
#@ spec
# Spec only. The tests import one name: SessionTree.
#
# SessionTree(ws, path) is a SessionLog (it inherits __init__ and the torn-line refusal) whose file
# is read as a tree of conversations. Every entry has an "id" and a "parent_id" (None for the
# first entry of a conversation), and a *leaf entry* says where the conversation goes on from:
#     {"id": "e4", "parent_id": "e3", "type": "message", "message": {...}}
#     {"id": "e6", "parent_id": "e2", "type": "leaf"}        carry on from e2
#
#   .entries() -> list[dict]   SessionLog's entries, each given a "parent_id" as it is read: an
#                     entry written without one (lesson 11's files) gets the id of the entry on
#                     the line before (None on line 1), so an old file is one branch. An explicit
#                     "parent_id": null stays None. The file is never changed by reading it.
#   .leaf() -> str | None      where the conversation is now, read off the file's last line: a
#                     message entry's own id, a leaf entry's parent_id; None with no entries.
#   .path_to(entry_id) -> list[dict]   the entries from the root down to entry_id, following
#                     parent ids. It raises ValueError(f"{path}, line {n}: ...") naming n, the
#                     line at fault, when an id is used twice in the file (n: its second line),
#                     when a parent on the path names no entry (n: the entry naming it), and
#                     when the walk comes back to an entry already on the path (n: the entry
#                     whose parent_id closes the loop). An entry_id not in the file raises
#                     ValueError.
#   .rows(), .replay()  as in SessionLog, but along path_to(the last line's id), leaf entries
#                     left out: the transcript is the path to where you are, not the file.
# Nothing is kept between calls: every answer is worked out from the file as it is now.
#@ code
class SessionTree(SessionLog):
    """SessionLog's file read as a tree of conversations. Each entry has an id and a parent_id
    (None for a root); a leaf entry {"id", "parent_id", "type": "leaf"} says the conversation
    carries on from its parent. Where you are is worked out from the last line, never stored, and
    the transcript is the path from the root to there. Lesson 11's flat files read as one branch.
    Nothing written is ever rewritten: going back is one more line."""

    def entries(self):
        """Every entry, oldest first, each with a parent_id. An entry written without one (lesson
        11's shape) takes the entry on the line before as its parent, as it is read: the file is
        never migrated on disk."""
        entries = []
        for entry in super().entries():
            if "parent_id" not in entry:
                entry = {**entry, "parent_id": entries[-1]["id"] if entries else None}
            entries.append(entry)
        return entries

    def leaf(self):
        """The id of the entry the conversation now ends at: the last line's own id for a message,
        its parent for a leaf entry; None for an empty log."""
        entries = self.entries()
        if not entries:
            return None
        last = entries[-1]
        return last["parent_id"] if last["type"] == "leaf" else last["id"]

    def path_to(self, entry_id):
        """The entries from the root down to `entry_id`. A tree that is not a tree (an id used
        twice, a parent that is not there, a loop) raises ValueError naming the line at fault:
        replaying a guess would send the model a conversation nobody had."""
        by_id, line = {}, {}
        for number, entry in enumerate(self.entries(), 1):
            if entry["id"] in by_id:
                raise ValueError(f"{self.path}, line {number}: id {entry['id']} is already used on "
                                 f"line {line[entry['id']]}")
            by_id[entry["id"]], line[entry["id"]] = entry, number
        if entry_id not in by_id:
            raise ValueError(f"{self.path}: there is no entry {entry_id}")
        path, seen = [], set()
        entry = by_id[entry_id]
        while True:
            path.append(entry)
            seen.add(entry["id"])
            parent = entry["parent_id"]
            if parent is None:
                return path[::-1]
            where = f"{self.path}, line {line[entry['id']]}"
            if parent not in by_id:
                raise ValueError(f"{where}: its parent {parent} is not in the file")
            if parent in seen:
                raise ValueError(f"{where}: its parent {parent} is already on the path (a cycle)")
            entry = by_id[parent]

    def rows(self):
        """(entry id, message) along the path from the root to the last line: the transcript of
        the branch you are on, whatever else the file holds."""
        entries = self.entries()
        if not entries:
            return []
        return [(entry["id"], entry["message"]) for entry in self.path_to(entries[-1]["id"])
                if entry["type"] == "message"]
#@ end
#@ block S2.2 gap
#@ spec
    # Spec only. Two methods; lesson 11's persist_to works on a SessionTree unchanged.
    #
    #   .append_message(message) -> str   appends one message entry whose parent_id is leaf(),
    #                     and returns its id: "e" + the number of its line, as in SessionLog, so
    #                     an id is never used twice, however many branches the file holds.
    #   .branch(entry_id) -> str   goes back to a message: appends one leaf entry whose parent_id
    #                     is entry_id and returns its id ("e" + its line). Nothing is copied and
    #                     no line is touched: the next message hangs off entry_id, and the branch
    #                     you left stays in the file. An entry_id that is not the id of a message
    #                     entry raises ValueError naming it, and writes nothing.
    # On a file whose last line is torn, both raise lesson 11's ValueError naming that line, and
    # write nothing.
    # Neither keeps anything in memory: another SessionTree on the file, or one made after a
    # reboot, finds the same leaf.
#@ code

    def append_message(self, message):
        """Append one message hanging off the current leaf; return its id, "e" + its line number,
        which no branch can repeat."""
        entry = {"id": f"e{len(self.entries()) + 1}", "parent_id": self.leaf(), "type": "message",
                 "message": message}
        self.ws.append_text(self.path, json.dumps(entry) + "\n")
        return entry["id"]

    def branch(self, entry_id):
        """Go back to the message `entry_id`: one leaf line that points at it. The branch you
        leave is not copied, cut or rewritten; it stays in the file, and so does the way back."""
        entries = self.entries()
        if not any(e["id"] == entry_id and e["type"] == "message" for e in entries):
            raise ValueError(f"{self.path}: no message entry has the id {entry_id}")
        entry = {"id": f"e{len(entries) + 1}", "parent_id": entry_id, "type": "leaf"}
        self.ws.append_text(self.path, json.dumps(entry) + "\n")
        return entry["id"]
#@ end
#@ block 11.2 gap
#@ spec
# Spec only. The tests import one name: persist_to.
#
# persist_to(log) -> listener. `log` is a SessionLog. The listener appends the message of every
# message_end event to it, as the event arrives, and ignores every other event. If the log
# raises (a torn file, a full disk), so does the listener: it catches nothing. Used as
#     h.subscribe(persist_to(log))
# and from then on nobody else in the program saves anything.
#@ code


def persist_to(log):
    """A listener that saves: the message of every message_end is appended to `log` as the event
    arrives, before any consumer sees it. It catches nothing: a log that cannot take the message
    (a torn file, a full disk) ends the run."""
    def listener(event):
        if event["type"] == "message_end":
            log.append_message(event["message"])
    return listener
#@ end
#@ block 12.1 given


# == 7 context ==
# The model reads at most a window of tokens a request. What is sent must fit; what is kept need
# not: compaction changes what replay() makes of the log, never the lines already in it.

RESERVE = 1_000       # tokens left free under the window: the estimate's error, and the reply
KEEP_RECENT = 2_000   # tokens counted back from the newest message to find where to cut
SUMMARY_PREFIX = "Previous conversation summary:\n"
SUMMARY_SYSTEM = ("You summarise a conversation between a user and a coding agent. Do not continue "
                  "it and do not answer anything in it: write the summary and nothing else.")
SUMMARY_PROMPT = ("Summarise the conversation above for a model that will carry on the work from "
                  "it. Use exactly these sections: ## Goal, ## Constraints, ## Progress, "
                  "## Decisions, ## Next steps. Keep file names, commands and errors word for "
                  "word.")


def conversation_text(messages):
    """The messages as one plain text, for a request that offers no tools. Calls and results
    become lines of text, never tool blocks: a provider may refuse tool blocks in a request with
    no tools (Anthropic's Messages API has been reported to answer 400, "Requests which include
    tool_use or tool_result blocks must define tools"; Bedrock's Converse API has the same rule),
    and text has no pairs to get wrong."""
    lines = ["<conversation>"]
    for m in messages:
        if m["role"] == "toolResult":
            error = "true" if m.get("is_error") else "false"
            lines.append(f'<message role="toolResult" id="{m["tool_call_id"]}" '
                         f'name="{m["tool_name"]}" error="{error}">')
        else:
            lines.append(f'<message role="{m["role"]}">')
        if m["role"] == "assistant":
            words = text_of(m)
        else:
            words = m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        if words:
            lines.append(words)
        if m["role"] == "assistant":
            lines += [f'<call id="{c["id"]}" name="{c["name"]}">{json.dumps(c["arguments"])}</call>'
                      for c in tool_calls(m)]
        lines.append("</message>")
    return "\n".join(lines + ["</conversation>"])


def estimate_tokens(messages):
    """About four characters a token, for the words each message carries, plus 4 for its
    envelope. An estimate made before sending: the provider's own count (a reply's
    usage["input"]) is the truth, and it is higher, because it also counts the JSON around the
    words, the system prompt and the tools. The reserve is there for the difference."""
    total = 0
    for m in messages:
        if m["role"] == "assistant":
            text = text_of(m) + "".join(c["name"] + json.dumps(c["arguments"])
                                        for c in tool_calls(m))
        else:
            text = m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        total += 4 + (len(text) + 3) // 4
    return total
#@ end
#@ block 12.1 gap
#@ spec
# Spec only. The tests import two names here: find_cut and summarise.
#
# find_cut(messages, keep_recent=KEEP_RECENT) -> int   where to cut for a compaction: the index of
#     the first message kept word for word. Everything before it will be summarised; 0 means
#     there is nothing to summarise. Count back from the newest message, adding
#     estimate_tokens([message]), until the total reaches keep_recent. From that message, move
#     forward to the first user message at or after it: a cut never splits a call from its
#     result, and the kept part never starts on a tool result. keep_recent is where the count
#     stops, not a cap: when the cut moves on, the kept part is under keep_recent; when the
#     count stops on a user message, the cut is that message, and the kept part passes
#     keep_recent by less than that message's size. The cut is never 0 itself (then the next
#     user message after index 0). It is 0 when the whole list is under keep_recent, or when no
#     user message follows.
#
# summarise(model, messages) -> str   asks `model` for a summary of `messages`: one request,
#     model.complete(SUMMARY_SYSTEM, [user_message(conversation_text(context_for_model(messages))
#     + "\n\n" + SUMMARY_PROMPT)], []): one user message of plain text, no tool blocks and no
#     tools at all. It returns the text of the reply, stripped (a tool call in the reply is
#     ignored: only a reply with no text is empty). A failed reply raises
#     RuntimeError(f"the summary failed: {its error_message}"); an empty text raises
#     RuntimeError("the summary is empty"). An empty summary is an error, never a success.
#@ code


def find_cut(messages, keep_recent=KEEP_RECENT):
    """Where to cut: the first message kept whole; 0 means nothing to compact. The count back
    stops where the newest keep_recent tokens begin, and the cut moves on from there to a user
    message, so a turn is never cut in half and no kept tool result loses its call. The part kept
    word for word is under keep_recent once the cut has moved on; if the count stopped on a user
    message, it is kept, and the part passes keep_recent by less than that message."""
    total = 0
    for index in range(len(messages) - 1, -1, -1):
        total += estimate_tokens([messages[index]])
        if total >= keep_recent:
            break
    else:
        return 0                                  # all of it is recent
    for later in range(max(index, 1), len(messages)):
        if messages[later]["role"] == "user":
            return later
    return 0


def summarise(model, messages):
    """A summary of `messages`, written by `model` with no tools on offer: a model offered tools
    carries on the work instead of describing it. So the calls and results go as text, inside
    one user message (conversation_text). Raises RuntimeError for a failed or empty
    reply: a compaction with nothing in its summary would throw the history away."""
    text = conversation_text(context_for_model(messages)) + "\n\n" + SUMMARY_PROMPT
    reply = model.complete(SUMMARY_SYSTEM, [user_message(text)], [])
    if reply["stop_reason"] == "error":
        raise RuntimeError(f"the summary failed: {reply.get('error_message')}")
    summary = text_of(reply).strip()
    if not summary:
        raise RuntimeError("the summary is empty")
    return summary
#@ end
#@ block 12.2 given


OVERFLOW_WORDS = ("prompt is too long", "context length", "context window", "maximum context",
                  "too many tokens", "input is too long")
#@ end
#@ block 12.2..13.2 gap
#@ spec
# Spec only. The tests import three names here: is_overflow, compact and Session (and they call
# Harness.prompt(None), the retry run_agent now gives you).
#
# is_overflow(message) -> bool   True for a failed assistant reply (stop_reason "error") whose
#     error_message, in lower case, holds one of OVERFLOW_WORDS; False for everything else.
#
# compact(log, model, keep_recent=KEEP_RECENT) -> bool   one compaction of a SessionLog: cut
#     log.rows() with find_cut, summarise the messages before the cut, and append one compaction
#     entry that replaces exactly those rows' ids. Returns True if it compacted, False if there
#     was nothing to cut (and then nothing is asked and nothing written). An error in the summary
#     goes up, with nothing written.
#
# Session(model, system, tools, log, *, window, reserve=RESERVE, keep_recent=KEEP_RECENT,
#         max_turns=None) is a harness over a log that compacts at most once for an overflow and
#         retries at most once.
#   .messages       log.replay(), worked out every time: a Session keeps no list of its own
#   .is_running     True from the call of prompt() until its run is exhausted, closed or dies
#   .prompt(text)   one writer, as lesson 8's Harness: while a prompt of this Session is running,
#                   prompt() raises RuntimeError("already running") at once, before it reads or
#                   writes anything (check and set a flag, then return the run, a generator).
#                   The run is a generator of events, in three steps:
#       1. before: if estimate_tokens(messages + [user_message(text)]) > window - reserve,
#          compact(log, model, keep_recent), once, even if the estimate is still over after it;
#          if it did, yield {"type": "compaction", "reason": "threshold"}
#       2. the run: a new Harness(model, system, tools, messages=log.replay(),
#          max_turns=max_turns) with persist_to(log) subscribed; yield every event of its
#          prompt(text)
#       3. after: if the record now ends with is_overflow, compact once; if it did, yield
#          {"type": "compaction", "reason": "overflow"} and retry once: a new Harness as in 2,
#          and every event of its prompt(None). Never a second compaction or a second retry:
#          a refusal after the retry stays in the record, for the caller to see. Once is per
#          prompt: a prompt refused for length gets its compaction and retry whether or not it
#          compacted in step 1, and whatever an earlier prompt did. An error in a summary, in
#          step 1 or 3, goes up out of the run.
#@ code


def is_overflow(message):
    """A refusal for length: a failed reply whose words say the request was too long. A failed
    reply keeps only the provider's words (error_message), not its HTTP status or error code, and
    each provider words it its own way, so the words are what this can check."""
    words = (message.get("error_message") or "").lower()
    return (message["role"] == "assistant" and message.get("stop_reason") == "error"
            and any(marker in words for marker in OVERFLOW_WORDS))


def compact(log, model, keep_recent=KEEP_RECENT):
    """Summarise the old part of the log and append one entry saying so; True if it did. The
    summary is asked for before anything is written, so a failure leaves the log as it was."""
    rows = log.rows()
    cut = find_cut([message for _, message in rows], keep_recent)
    if cut == 0:
        return False
    summary = summarise(model, [message for _, message in rows[:cut]])
    log.append_compaction(summary, [row_id for row_id, _ in rows[:cut]])
    return True


class Session:
    """A harness over a log that meets the wall: it compacts before a request the estimate says
    will not fit, and after a refusal for length it compacts once and retries once. Holds its
    settings and a running flag, nothing else: the transcript is log.replay(). One writer: each
    prompt builds a new Harness, so the Harness's own guard cannot see the last one; the Session
    keeps the guard instead."""

    def __init__(self, model, system, tools, log, *, window, reserve=RESERVE,
                 keep_recent=KEEP_RECENT, max_turns=None):
        self.model, self.system, self.tools, self.log = model, system, list(tools), log
        self.window, self.reserve, self.keep_recent = window, reserve, keep_recent
        self.max_turns = max_turns
        self._running = False

    @property
    def messages(self):
        return self.log.replay()

    @property
    def is_running(self):
        return self._running

    def _harness(self):
        """A harness on the log as it stands, saving to it."""
        h = Harness(self.model, self.system, self.tools, messages=self.log.replay(),
                    max_turns=self.max_turns)
        h.subscribe(persist_to(self.log))
        return h

    def prompt(self, text):
        if self._running:  # checked now, not at the first next()
            raise RuntimeError("already running")
        self._running = True
        return self._guarded(self._run(text))

    def _guarded(self, run):
        try:
            yield from run
        finally:                  # exhausted, closed or died: the next prompt may run
            self._running = False

    def _run(self, text):
        estimate = estimate_tokens(self.messages + [user_message(text)])
        if estimate > self.window - self.reserve and compact(self.log, self.model,
                                                             self.keep_recent):
            yield {"type": "compaction", "reason": "threshold"}
        h = self._harness()
        yield from h.prompt(text)
        if h.messages and is_overflow(h.messages[-1]) and compact(self.log, self.model,
                                                                  self.keep_recent):
            yield {"type": "compaction", "reason": "overflow"}
            yield from self._harness().prompt(None)   # once: a second refusal stays
#@ end
#@ block 13.2..15.1 gap
#@ spec
# Below is lesson 12's code. is_overflow and compact stay as they are; Session changes in two
# places, and the tests import it as before.
#
# Session(model, system, tools, log, *, window, ...): `system` is either a string (lesson 12's
#     fixed prompt) or a function of no arguments that returns the prompt, such as
#     lambda: build_system_prompt(tools, ws, cwd, clock).
#   - the run of prompt(text) (_run; prompt keeps lesson 12's one-writer check) works the prompt
#     out once, at its start, inside the run's try whose finally clears the running flag (a
#     builder that raises ends that prompt before anything is sent or logged, its exception
#     reaches the caller as it was raised, neither caught nor wrapped, and the next prompt()
#     still runs): it calls `system` if it is callable, and uses that one text for
#     the whole prompt: the estimate, the run, and the retry after an overflow. Nothing keeps it
#     afterwards: the next prompt builds it again, and the log never holds it, so a resumed
#     session gets today's.
#   - the estimate before a prompt counts the system prompt too, as one more message:
#     estimate_tokens([user_message(system_text)] + messages + [user_message(text)]).
#@ code


def is_overflow(message):
    """A refusal for length: a failed reply whose words say the request was too long. A failed
    reply keeps only the provider's words (error_message), not its HTTP status or error code, and
    each provider words it its own way, so the words are what this can check."""
    words = (message.get("error_message") or "").lower()
    return (message["role"] == "assistant" and message.get("stop_reason") == "error"
            and any(marker in words for marker in OVERFLOW_WORDS))


def compact(log, model, keep_recent=KEEP_RECENT):
    """Summarise the old part of the log and append one entry saying so; True if it did. The
    summary is asked for before anything is written, so a failure leaves the log as it was."""
    rows = log.rows()
    cut = find_cut([message for _, message in rows], keep_recent)
    if cut == 0:
        return False
    summary = summarise(model, [message for _, message in rows[:cut]])
    log.append_compaction(summary, [row_id for row_id, _ in rows[:cut]])
    return True


class Session:
    """A harness over a log that meets the wall, and reads today's instructions at the start of
    each prompt. Holds its settings and a running flag, nothing else: the transcript is
    log.replay(), and the system prompt is built when a prompt starts and dropped when it ends,
    so it is never stale and never in the log."""

    def __init__(self, model, system, tools, log, *, window, reserve=RESERVE,
                 keep_recent=KEEP_RECENT, max_turns=None):
        self.model, self.system, self.tools, self.log = model, system, list(tools), log
        self.window, self.reserve, self.keep_recent = window, reserve, keep_recent
        self.max_turns = max_turns
        self._running = False

    @property
    def messages(self):
        return self.log.replay()

    @property
    def is_running(self):
        return self._running

    def _harness(self, system):
        """A harness on the log as it stands, saving to it, with this prompt's instructions."""
        h = Harness(self.model, system, self.tools, messages=self.log.replay(),
                    max_turns=self.max_turns)
        h.subscribe(persist_to(self.log))
        return h

    def prompt(self, text):
        if self._running:  # checked now, not at the first next()
            raise RuntimeError("already running")
        self._running = True
        return self._guarded(self._run(text))

    def _guarded(self, run):
        try:
            yield from run
        finally:                  # exhausted, closed or died: the next prompt may run
            self._running = False

    def _run(self, text):
        system = self.system() if callable(self.system) else self.system   # once a prompt
        estimate = estimate_tokens([user_message(system)] + self.messages + [user_message(text)])
        if estimate > self.window - self.reserve and compact(self.log, self.model,
                                                             self.keep_recent):
            yield {"type": "compaction", "reason": "threshold"}
        h = self._harness(system)
        yield from h.prompt(text)
        if h.messages and is_overflow(h.messages[-1]) and compact(self.log, self.model,
                                                                  self.keep_recent):
            yield {"type": "compaction", "reason": "overflow"}
            yield from self._harness(system).prompt(None)   # the same instructions, once
#@ end
#@ block 15.1 given: Session, async


def is_overflow(message):
    """A refusal for length: a failed reply whose words say the request was too long. A failed
    reply keeps only the provider's words (error_message), not its HTTP status or error code, and
    each provider words it its own way, so the words are what this can check."""
    words = (message.get("error_message") or "").lower()
    return (message["role"] == "assistant" and message.get("stop_reason") == "error"
            and any(marker in words for marker in OVERFLOW_WORDS))


def compact(log, model, keep_recent=KEEP_RECENT):
    """Summarise the old part of the log and append one entry saying so; True if it did. The
    summary is asked for before anything is written, so a failure leaves the log as it was."""
    rows = log.rows()
    cut = find_cut([message for _, message in rows], keep_recent)
    if cut == 0:
        return False
    summary = summarise(model, [message for _, message in rows[:cut]])
    log.append_compaction(summary, [row_id for row_id, _ in rows[:cut]])
    return True


class Session:
    """A harness over a log that meets the wall at most once a prompt, and reads today's
    instructions at the start of each prompt. Holds its settings and nothing else: the transcript
    is log.replay(), and the system prompt is built when a prompt starts and dropped when it
    ends, so it is never stale and never in the log. Async from lesson 15: prompt returns an
    async generator, over the harness's; one writer, as in lesson 12."""

    def __init__(self, model, system, tools, log, *, window, reserve=RESERVE,
                 keep_recent=KEEP_RECENT, max_turns=None):
        self.model, self.system, self.tools, self.log = model, system, list(tools), log
        self.window, self.reserve, self.keep_recent = window, reserve, keep_recent
        self.max_turns = max_turns
        self._running = False

    @property
    def messages(self):
        return self.log.replay()

    @property
    def is_running(self):
        return self._running

    def _harness(self, system):
        """A harness on the log as it stands, saving to it, with this prompt's instructions."""
        h = Harness(self.model, system, self.tools, messages=self.log.replay(),
                    max_turns=self.max_turns)
        h.subscribe(persist_to(self.log))
        return h

    def prompt(self, text):
        if self._running:  # checked now, not at the first step
            raise RuntimeError("already running")
        self._running = True
        return self._run(text)

    async def _run(self, text):
        try:
            system = self.system() if callable(self.system) else self.system   # once a prompt
            estimate = estimate_tokens([user_message(system)] + self.messages
                                       + [user_message(text)])
            if estimate > self.window - self.reserve and compact(self.log, self.model,
                                                                 self.keep_recent):
                yield {"type": "compaction", "reason": "threshold"}
            h = self._harness(system)
            async for event in h.prompt(text):
                yield event
            if h.messages and is_overflow(h.messages[-1]) and compact(self.log, self.model,
                                                                      self.keep_recent):
                yield {"type": "compaction", "reason": "overflow"}
                async for event in self._harness(system).prompt(None):   # the same, once
                    yield event
        finally:
            self._running = False
#@ end
#@ block 13.1 given


# == 8 instructions ==
# The system prompt says who the agent is and what is true today: its tools, its rules, the
# project's instruction files, the skills it may read, the date and the folder. It is built from
# the world as it is, and never written down: the log keeps what happened.

IDENTITY = "You are a coding agent in the user's project. Say plainly what you did and did not do."
GUIDELINES = (
    "Read a file before you change it.",
    "Follow the project's instructions below; where two disagree, the nearer folder's wins.",
    "Run the tests after a change, and report what they said.",
    "Ask before you delete anything.",
)
INSTRUCTIONS_FILE = "AGENTS.md"   # a project's standing instructions, in any folder
SKILLS_FOLDER = "skills"          # skills/<name>/SKILL.md


def snippet(tool):
    """A tool in one line for the prompt: the first sentence of its description. The full
    description and the parameters travel with the request's tool list already."""
    first = tool["description"].split(". ")[0].strip()
    return first if first.endswith(".") else first + "."


def skill_description(text):
    """The `description:` of a SKILL.md's front matter (the lines between the first two `---`),
    or "" if it has none. Only this line of a skill goes into the prompt."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return ""
    for line in lines[1:]:
        if line.strip() == "---":
            break
        if line.startswith("description:"):
            return line[len("description:"):].strip()
    return ""
#@ end
#@ block 13.1 gap
#@ spec
# Spec only. The tests import three names here: find_instructions, list_skills and
# build_system_prompt. All three read the workspace when they are called, and write nothing.
#
# find_instructions(ws, cwd) -> list of (path, text)   every INSTRUCTIONS_FILE on the way from
#     the workspace's root (".") down to the working folder `cwd` ("." or a path such as
#     "app/api"), the root's first and the working folder's last: "AGENTS.md", "app/AGENTS.md",
#     "app/api/AGENTS.md", each only if it exists, with its text as read. Never a folder beside
#     the way or below cwd. The folders are cwd's parts: cwd split on "/", without "" and "."
#
# list_skills(ws) -> list of dicts   one {"name", "description", "path"} for each
#     SKILLS_FOLDER/<name>/SKILL.md on the disk (one folder down, never deeper), sorted by name
#     (a real disk's listing promises no order): the name is the folder's (never the front
#     matter's `name:`), the description is skill_description(its text), the path is the
#     file's. [] with no skills. A SKILL.md removed after the listing, before its path is
#     checked, is left out.
#
# build_system_prompt(tools, ws, cwd, clock, *, custom=None, guidelines=()) -> str   sections
#     joined by one blank line ("\n\n"), in this order, a section with nothing in it left out:
#   1. the default part, or `custom` (a string) in its place; custom replaces only this part:
#        IDENTITY
#        "Tools:" then one line per tool, in order: f"- {name}: {snippet(tool)}" ("- (none)")
#        "Guidelines:" then one line f"- {g}" per guideline: each tool's tool.get("guidelines"),
#        in tool order, then `guidelines`, then GUIDELINES, each only once, where it first came
#      (IDENTITY, the tools and the guidelines are three sections of this part)
#   2. the project's instructions, if find_instructions found any with text in them: the line
#        "Project instructions, outermost first; the last is nearest and wins:"
#      then per file f'<instructions path="{path}">', text.rstrip(), and "</instructions>",
#      one line each. A file that holds nothing but blank space is left out
#   3. the skills, if there are any and a tool is named exactly "read" (bash does not count):
#        "Skills: when a task matches one, read its file with the read tool first."
#      then one line per skill f"- {name}: {description} ({path})". Never a skill's body
#   4. f"Today's date: {clock.today().isoformat()}" and, on the next line,
#      f"Working folder: {where}": "/workspace", then "/" + each folder find_instructions walks
#      through, so "app/api" gives "/workspace/app/api" and "." gives "/workspace".
#      The clock is asked now, each time: never the machine's date, never a date kept from before
#   It writes nothing and changes none of its arguments (the tools, their guidelines, the list).
#@ code


def cwd_parts(cwd):
    """The folders of a working folder, outermost first: "./app//api/" is ["app", "api"]. The
    walk for instructions and the folder line of the prompt both read cwd this one way."""
    return [part for part in cwd.split("/") if part not in ("", ".")]


def find_instructions(ws, cwd):
    """The project's instruction files from the root down to the working folder, nearest last,
    read now: the last word is the most specific one, and an edit shows at the next build."""
    folders, parts = ["."], cwd_parts(cwd)
    folders += ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    paths = [INSTRUCTIONS_FILE if folder == "." else f"{folder}/{INSTRUCTIONS_FILE}"
             for folder in folders]
    return [(path, ws.read_text(path)) for path in paths if ws.exists(path)]


def list_skills(ws):
    """Every skill on the disk by name, description and path: what the prompt lists. A skill's
    instructions stay in its file until the model reads them."""
    if not ws.exists(SKILLS_FOLDER):
        return []
    skills = []
    for name in ws.listdir(SKILLS_FOLDER):
        path = f"{SKILLS_FOLDER}/{name}/SKILL.md"
        if ws.exists(path):
            skills.append({"name": name, "description": skill_description(ws.read_text(path)),
                           "path": path})
    return sorted(skills, key=lambda skill: skill["name"])


def collect_guidelines(tools, guidelines=()):
    """The tools' guidelines, the caller's, then the harness's own, each said once, where it
    first came: two tools that share a rule should not make it louder."""
    said = []
    for tool in tools:
        said += list(tool.get("guidelines", ()))
    said += list(guidelines) + list(GUIDELINES)
    unique = []
    for guideline in said:
        if guideline not in unique:
            unique.append(guideline)
    return unique


def build_system_prompt(tools, ws, cwd, clock, *, custom=None, guidelines=()):
    """Today's system prompt, from today's state: the default part (or the caller's own), the
    project's instructions, the skills by name, the date and the folder. Pure apart from reading
    the disk and the clock: the same world gives the same text."""
    if custom is not None:
        sections = [custom]
    else:
        tool_lines = [f"- {tool['name']}: {snippet(tool)}" for tool in tools] or ["- (none)"]
        sections = [IDENTITY, "\n".join(["Tools:"] + tool_lines),
                    "\n".join(["Guidelines:"] + [f"- {g}" for g in
                                                 collect_guidelines(tools, guidelines)])]
    files = [(path, text.rstrip()) for path, text in find_instructions(ws, cwd)
             if text.strip()]                                   # a blank file says nothing
    if files:
        lines = ["Project instructions, outermost first; the last is nearest and wins:"]
        for path, text in files:
            lines += [f'<instructions path="{path}">', text, "</instructions>"]
        sections.append("\n".join(lines))
    skills = list_skills(ws)
    if skills and any(tool["name"] == "read" for tool in tools):
        lines = ["Skills: when a task matches one, read its file with the read tool first."]
        lines += [f"- {s['name']}: {s['description']} ({s['path']})" for s in skills]
        sections.append("\n".join(lines))
    where = "".join(["/workspace"] + [f"/{part}" for part in cwd_parts(cwd)])
    sections.append(f"Today's date: {clock.today().isoformat()}\nWorking folder: {where}")
    return "\n\n".join(section for section in sections if section)   # custom="" is no section
#@ end
#@ block 14.1 given


# == 9 streaming ==
# A reply arrives in pieces, as the model writes it. The loop shows each piece the moment it comes
# and records the message once, whole, when the stream is over.

STREAM_ENDED = "the stream ended with no end event"


def parse_arguments(text):
    """A call's arguments, from the whole of its JSON text: {} for no text, the object it holds,
    or, when the text is not a JSON object, {"_raw_arguments": text}: the tool refuses it as a
    call without its arguments, and the model reads why on the next turn."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"_raw_arguments": text}
#@ end
#@ block 14.1 gap
#@ spec
# Spec only. The tests import two names here: grow and stream_reply (and STREAM_ENDED, above).
#
# A partial message is an assistant message still arriving: {"role": "assistant", "content":
# [...], "stop_reason": None}. In it, a toolCall block's "arguments" is the JSON text received so
# far (a str), and the block also keeps the call's stream "index".
#
# grow(partial, piece) -> dict   a NEW partial message with one stream event added; `partial`
#     itself, and every block in it, is never changed.
#     - {"type": "text"}: its text goes on the end of the last block if that is a text block,
#       else into a new text block {"type": "text", "text": ...}
#     - {"type": "call"}: a new block {"type": "toolCall", "id", "name", "arguments": "",
#       "index"}
#     - {"type": "arguments"}: its "json" goes on the end of the arguments of the toolCall block
#       whose index is the piece's index. Never parsed here: a piece of JSON is not JSON, and
#       the block keeps exactly those five keys (no parsed guess beside the text)
#     - any other type: the partial as it is
#
# stream_reply(stream) -> a generator of events, whose return value is the finished message.
#     `stream` yields stream events (see lab.pieces). Take the first one: if that raises, let it
#     go up, nothing announced (lesson 05: an exception from the model is not the loop's). Then
#     yield {"type": "message_start", "message": <the empty partial>}, and for each event:
#     - a piece (text, call, arguments, or a type grow does not know, such as a ping): partial =
#       grow(partial, piece), then yield
#       {"type": "message_update", "piece": piece, "message": partial}
#     - "end": return the finished message: role, content, stop_reason and usage from the end
#       event (usage {} when the end event has none: a provider sends it only when asked). In its
#       content a toolCall is {"type", "id", "name", "arguments"}, its arguments
#       parse_arguments(<the whole text>): parsed once, here
#     - "error": return a failed message (stop_reason "error", error_message the event's
#       "message") that keeps the content that arrived, finished as above
#     - the stream stops with no "end": the same, with error_message STREAM_ENDED
#     - the stream raises OSError (ConnectionError, TimeoutError) after the first event: the
#       same, with error_message f"{type(error).__name__}: {error}"
#     It records nothing: the loop records the message it returns, then announces message_end.
#@ code


def grow(partial, piece):
    """The partial message with one more piece in it: a new message; the old one, and its blocks,
    are never changed, so every update a frontend was handed stays as it was. A call's arguments
    stay the JSON text received so far: a piece of JSON is not JSON."""
    content = list(partial["content"])
    if piece["type"] == "text":
        if content and content[-1]["type"] == "text":
            content[-1] = {"type": "text", "text": content[-1]["text"] + piece["text"]}
        else:
            content.append({"type": "text", "text": piece["text"]})
    elif piece["type"] == "call":
        content.append({"type": "toolCall", "id": piece["id"], "name": piece["name"],
                        "arguments": "", "index": piece["index"]})
    elif piece["type"] == "arguments":
        content = [dict(block, arguments=block["arguments"] + piece["json"])
                   if block["type"] == "toolCall" and block["index"] == piece["index"] else block
                   for block in content]
    return {**partial, "content": content}


def finished(partial, **fields):
    """The message a stream ends with: the partial's content, each call's arguments parsed once,
    now that all of their text is in, and `fields` (stop_reason, usage or error_message)."""
    content = [{"type": "toolCall", "id": block["id"], "name": block["name"],
                "arguments": parse_arguments(block["arguments"])}
               if block["type"] == "toolCall" else block for block in partial["content"]]
    return {"role": "assistant", "content": content, **fields}


def stream_reply(stream):
    """Announce a reply piece by piece as it arrives, and return it whole. A generator: yields
    message_start, then one message_update per piece carrying the piece and the partial message
    as it now stands; its return value is the finished message, for the loop to record. A
    stream that breaks (an error event, no end event, a dropped connection) still ends in a
    message: a failed one, which keeps what arrived, because the user has already seen it."""
    stream = iter(stream)
    piece = next(stream, None)       # raises before anything is announced: not ours to catch
    partial = {"role": "assistant", "content": [], "stop_reason": None}
    yield {"type": "message_start", "message": partial}
    try:
        while piece is not None:
            if piece["type"] == "end":
                return finished(partial, stop_reason=piece["stop_reason"],
                                usage=piece.get("usage", {}))
            if piece["type"] == "error":
                return finished(partial, stop_reason="error", error_message=piece["message"])
            partial = grow(partial, piece)
            yield {"type": "message_update", "piece": piece, "message": partial}
            piece = next(stream, None)
    except OSError as error:         # the connection dropped after words were shown
        return finished(partial, stop_reason="error",
                        error_message=f"{type(error).__name__}: {error}")
    return finished(partial, stop_reason="error", error_message=STREAM_ENDED)
#@ end
#@ block 14.2 given


RETRIES = 3                           # tries after the first, for a stream that fails at once
BACKOFF = 0.25                        # seconds before the first retry, doubled for each one after
TRANSIENT = (408, 409, 425, 429)      # statuses worth another try, with every status of 500 and up
#@ end
#@ block 14.2 gap
#@ spec
# Spec only. The tests import Retrying here, and TerminalRenderer (region 5).
#
# Retrying(model, retries=RETRIES, sleep=time.sleep)   a model whose stream is tried again when
#     it fails before its first piece, and never after. .complete(...) is model.complete(...).
#     A model with no stream method is refused at once: TypeError, with a sentence that says
#     so (the loop streams any model that has stream(), and Retrying always has one).
#     .stream(system, messages, tools) is a generator. Each try calls model.stream(...) and reads
#     its first event:
#     - a piece, or an end event: yield it and every event after it; no more tries
#     - an OSError raised (ConnectionError, TimeoutError), by the call to model.stream(...) itself
#       (an adapter that connects before returning its stream) or by reading the first event,
#       an error event whose message starts
#       with a status in TRANSIENT or of 500 and up, or no event at all: a failure worth a retry
#     - any other error event (a 400, say): yield it, and stop; a retry would be refused again
#     Before retry n (1, 2, ...) call sleep(BACKOFF * 2 ** (n - 1)). After `retries` retries,
#     yield {"type": "error", "message": <the last failure>}: f"{type(error).__name__}: {error}"
#     for an exception, the event's message, or STREAM_ENDED.
#@ code


def _transient(message):
    """True if an error's message starts with a status worth another try."""
    status = message.split(" ", 1)[0]
    return status.isdigit() and (int(status) in TRANSIENT or int(status) >= 500)


class Retrying:
    """A model whose stream is tried again when it fails before its first piece, and never after:
    once a piece is out the user has seen it, and a second try would show it twice. The waiting
    goes through `sleep`, so a test or a page can count it instead of waiting."""

    def __init__(self, model, retries=RETRIES, sleep=time.sleep):
        if not hasattr(model, "stream"):      # the loop would stream through us, and find nothing
            raise TypeError(f"Retrying retries a stream, and {type(model).__name__} has no "
                            "stream(): wrap a model that streams, or use this one unwrapped")
        self.model, self.retries, self.sleep = model, retries, sleep

    def complete(self, system, messages, tools):
        return self.model.complete(system, messages, tools)

    def stream(self, system, messages, tools):
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(BACKOFF * 2 ** (attempt - 1))
            try:                                      # the call too: it may connect at once
                stream = iter(self.model.stream(system, messages, tools))
                first = next(stream, None)
            except OSError as error:
                failure = f"{type(error).__name__}: {error}"
                continue
            if first is None:
                failure = STREAM_ENDED
            elif first["type"] != "error":
                yield first                           # a piece is out: no more tries
                yield from stream
                return
            elif _transient(first["message"]):
                failure = first["message"]
            else:
                yield first                           # refused: another try is refused again
                return
        yield {"type": "error", "message": failure}
#@ end
#@ block 16.3 gap
#@ spec
# Spec only. The closing page's tests import read_sse here; your HttpModel.stream reads with it.
#
# read_sse(chunks) -> a generator of {"event": name or None, "data": text}   server-sent events
#     from a byte stream cut anywhere: `chunks` is an iterable of bytes, and a chunk may end in
#     the middle of a line or of a character.
#     - decode with one incremental UTF-8 decoder for the whole stream
#       (codecs.getincrementaldecoder("utf-8")()), never chunk by chunk
#     - a line ends at "\n", "\r\n" or "\r" (a "\r" at the end of a chunk may be half of "\r\n":
#       wait for the next chunk, or for the end of the bytes, to know)
#     - a line starting with ":" is a comment: skip it
#     - "field: value" (one space after the colon dropped, if there is one): "event" sets the
#       name, each "data" line adds a line to the data (joined with "\n"); other fields ignored
#     - a blank line ends the event: yield it if it had any data line, then start afresh
#     - at the end of the bytes, an event with no blank line after it is not yielded: the stream
#       was cut
#@ code


def _lines(chunks):
    """The lines of a byte stream cut anywhere: one incremental decoder for the whole stream, so
    a character split between two chunks is put back together; a line ends at \\n, \\r\\n or \\r.
    The text after the last line ending is not a line: the stream was cut there."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    rest = ""
    for chunk in chunks:
        text = rest + decoder.decode(chunk)
        held = "\r" if text.endswith("\r") else ""    # maybe the first half of a \r\n
        lines = text[:len(text) - len(held)].replace("\r\n", "\n").replace("\r", "\n").split("\n")
        rest = lines.pop() + held
        yield from lines
    if rest.endswith("\r"):                          # nothing came after it: a whole line ending
        yield rest[:-1]


def read_sse(chunks):
    """Server-sent events from a byte stream cut anywhere: {"event": name or None, "data": text}
    for each event that ended with its blank line. Comments are skipped, data lines joined with
    a newline, and a last event the stream cut off before its blank line is not yielded."""
    name, data = None, []
    for line in _lines(chunks):
        if not line:                                  # a blank line ends the event
            if data:
                yield {"event": name, "data": "\n".join(data)}
            name, data = None, []
        elif not line.startswith(":"):                # a comment is skipped
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
#@ end
#@ block 16.1 given


# == 10 providers ==
# A provider adapter is a model like the scripted one, complete(system, messages, tools) and
# stream(system, messages, tools), that speaks one provider's wire format over HTTP. The book's
# messages never change shape: each adapter spells them the provider's way on the way out, and
# spells the answer back the book's way on the way in.

ANTHROPIC_STOPS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "toolUse",
                   "max_tokens": "length"}
#@ end
#@ block 16.1 gap
#@ spec
# Spec only. The tests import four names: anthropic_messages, anthropic_request, anthropic_reply
# and anthropic_events. Anthropic's Messages API (POST /v1/messages), as its documentation says:
#
# anthropic_messages(messages) -> list   the book's transcript in Anthropic's spelling:
#   - a user message: {"role": "user", "content": <its text>}
#   - an assistant message: {"role": "assistant", "content": [blocks]}, a text block as
#     {"type": "text", "text"} (an empty text is left out: Anthropic refuses it), a toolCall as
#     {"type": "tool_use", "id", "name", "input": <the arguments dict itself, not JSON text>};
#     an assistant message left with no blocks at all is left out: Anthropic refuses a message
#     with empty content (the one exception is a final assistant turn, which asks the model to
#     continue it, and nothing is there to continue)
#   - a toolResult: a *user* message holding {"type": "tool_result", "tool_use_id",
#     "content", "is_error"}, is_error kept as it is
#   - two messages in a row that come out with the same role are merged into one, their
#     contents as lists of blocks (a string becomes one text block), in order: the results
#     of one reply's calls go back in one user message
# anthropic_request(model, system, messages, tools, *, max_tokens, stream) -> dict   the body:
#     {"model", "max_tokens", "system": system, "messages": anthropic_messages(messages),
#      "tools": [{"name", "description", "input_schema": <the spec's "parameters">}]}
#     "system" is a field of its own, never a message, and left out when it is "". "tools" left
#     out when there are none. With stream=True, also "stream": True.
# anthropic_reply(data) -> dict   Anthropic's answer (a parsed JSON dict) as the book's message:
#     {"role": "assistant", "content": [text blocks and toolCall blocks, in order: tool_use
#      becomes {"type": "toolCall", "id", "name", "arguments": <its input>}; other block types
#      are left out], "stop_reason": ANTHROPIC_STOPS[...], "usage": {"input", "output"}}
#     usage["input"] counts every token read: input_tokens plus cache_creation_input_tokens and
#     cache_read_input_tokens when present. A stop_reason not in ANTHROPIC_STOPS ("refusal",
#     ...) makes the reply failed: stop_reason "error", error_message f"stop_reason {reason}",
#     its content kept.
# anthropic_events(sse) -> iterator   `sse` is an iterable of {"event", "data"} dicts (what
#     read_sse, of lab 3, makes of the bytes); yields the book's stream events (STREAM: text, call,
#     arguments, end, error):
#   - content_block_start of a tool_use: {"type": "call", "index": i, "id", "name"}, i counting
#     the calls of this reply from 0 (not Anthropic's block index, which counts text blocks too)
#   - content_block_delta: text_delta -> {"type": "text", "text"}; input_json_delta ->
#     {"type": "arguments", "index": i, "json": <partial_json>} for that block's call (an
#     empty partial_json: nothing)
#   - message_start carries the input usage (counted as in anthropic_reply, cached tokens
#     too), message_delta the stop_reason and output usage
#   - message_stop: {"type": "end", "stop_reason", "usage"}, or, for a stop_reason not in
#     ANTHROPIC_STOPS, {"type": "error", "message": f"stop_reason {reason}"}; then nothing more
#   - an error event: {"type": "error", "message": f"{error type}: {error message}"}, and stop
#   - ping and anything else: nothing
#   - the events run out before message_stop: {"type": "error", "message": "the stream ended
#     before message_stop"}. Exactly one end or error, always last.
#@ code


def anthropic_messages(messages):
    """The transcript in Anthropic's spelling. A tool's result is a block inside a user message,
    and it keeps is_error: Anthropic has a field for it. Same-role neighbours are merged, so the
    results of one reply's calls all go back in the one user message that must follow it."""
    out = []
    for m in messages:
        if m["role"] == "assistant":
            role, content = "assistant", [
                {"type": "text", "text": b["text"]} if b["type"] == "text" else
                {"type": "tool_use", "id": b["id"], "name": b["name"], "input": b["arguments"]}
                for b in m["content"] if b["type"] == "toolCall" or (b["type"] == "text"
                                                                     and b["text"])]
            if not content:                   # refused by Anthropic: "non-empty content"
                continue
        elif m["role"] == "toolResult":
            role, content = "user", [{"type": "tool_result", "tool_use_id": m["tool_call_id"],
                                      "content": m["content"], "is_error": m["is_error"]}]
        else:
            role, content = "user", m["content"]
        if out and out[-1]["role"] == role:
            out[-1]["content"] = _blocks(out[-1]["content"]) + _blocks(content)
        else:
            out.append({"role": role, "content": content})
    return out


def _blocks(content):
    """A message's content as a list of blocks: a string is one text block."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def anthropic_request(model, system, messages, tools, *, max_tokens, stream):
    """The body of one Messages request. The system prompt is a field of its own: Anthropic
    takes no system message in `messages`."""
    body = {"model": model, "max_tokens": max_tokens}
    if system:
        body["system"] = system
    body["messages"] = anthropic_messages(messages)
    if tools:
        body["tools"] = [{"name": t["name"], "description": t["description"],
                          "input_schema": t["parameters"]} for t in tools]
    if stream:
        body["stream"] = True
    return body


def _anthropic_input(usage):
    """Every input token Anthropic read: the cached ones are counted apart from input_tokens."""
    return sum(usage.get(key) or 0 for key in ("input_tokens", "cache_creation_input_tokens",
                                                "cache_read_input_tokens"))


def anthropic_reply(data):
    """Anthropic's answer as the book's assistant message. A stop the book has no name for is
    a failed reply, with what did arrive kept."""
    content = []
    for block in data.get("content") or []:
        if block["type"] == "text":
            content.append({"type": "text", "text": block["text"]})
        elif block["type"] == "tool_use":
            content.append({"type": "toolCall", "id": block["id"], "name": block["name"],
                            "arguments": block["input"]})
    usage = data.get("usage") or {}
    message = {"role": "assistant", "content": content,
               "stop_reason": ANTHROPIC_STOPS.get(data.get("stop_reason"), "error"),
               "usage": {"input": _anthropic_input(usage), "output": usage.get("output_tokens", 0)}}
    if message["stop_reason"] == "error":
        message["error_message"] = f"stop_reason {data.get('stop_reason')}"
    return message


def anthropic_events(sse):
    """Anthropic's stream as the book's stream events: one text or arguments event per delta,
    one call event per tool_use block, and exactly one end or error, last."""
    calls = {}                                  # Anthropic's block index -> the book's call index
    usage, stop = {"input": 0, "output": 0}, None
    for item in sse:
        data = json.loads(item["data"]) if item["data"] else {}
        kind = data.get("type", item["event"])
        if kind == "message_start":
            usage["input"] = _anthropic_input(data["message"].get("usage") or {})
        elif kind == "content_block_start" and data["content_block"]["type"] == "tool_use":
            block = data["content_block"]
            calls[data["index"]] = len(calls)
            yield {"type": "call", "index": calls[data["index"]], "id": block["id"],
                   "name": block["name"]}
        elif kind == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                yield {"type": "text", "text": delta["text"]}
            elif delta["type"] == "input_json_delta" and delta["partial_json"]:
                yield {"type": "arguments", "index": calls[data["index"]],
                       "json": delta["partial_json"]}
        elif kind == "message_delta":
            stop = data["delta"].get("stop_reason") or stop
            usage["output"] = (data.get("usage") or {}).get("output_tokens", usage["output"])
        elif kind == "message_stop":
            if stop in ANTHROPIC_STOPS:
                yield {"type": "end", "stop_reason": ANTHROPIC_STOPS[stop], "usage": usage}
            else:
                yield {"type": "error", "message": f"stop_reason {stop}"}
            return
        elif kind == "error":
            error = data.get("error") or {}
            yield {"type": "error", "message": f"{error.get('type')}: {error.get('message')}"}
            return
    yield {"type": "error", "message": "the stream ended before message_stop"}
#@ end
#@ block 16.2 given


OPENAI_STOPS = {"stop": "stop", "length": "length", "tool_calls": "toolUse",
                "function_call": "toolUse"}
FAILED_PREFIX = "Error: "   # Chat Completions has no is_error field: a failure says so in words
#@ end
#@ block 16.2 gap
#@ spec
# Spec only. The tests import four names: openai_messages, openai_request, openai_reply and
# openai_events. The OpenAI-compatible Chat Completions API (POST /v1/chat/completions), which
# OpenAI serves and so do Ollama, llama.cpp's server and vLLM, as OpenAI's documentation says:
#
# openai_messages(system, messages) -> list   the book's transcript in this spelling:
#   - first {"role": "system", "content": system} (left out when system is "")
#   - a user message: {"role": "user", "content": <its text>}
#   - an assistant message: {"role": "assistant", "content": <its text, or None if it has
#     none>} and, if it has calls, "tool_calls": [{"id", "type": "function", "function":
#     {"name", "arguments": <the arguments as a JSON string: json.dumps>}}]; one with neither
#     text nor calls is left out (the format wants content unless tool_calls is there)
#   - a toolResult: {"role": "tool", "tool_call_id", "content"}, one message per result, and
#     no other key (a "name" is allowed: some servers read it). There is no is_error field, so
#     FAILED_PREFIX goes in front of a failed result's content, whatever its words start with
# openai_request(model, system, messages, tools, *, stream) -> dict   the body:
#     {"model", "messages": openai_messages(system, messages), "tools": [{"type": "function",
#      "function": {"name", "description", "parameters"}}]}, "tools" left out when there are
#     none. With stream=True also "stream": True and "stream_options": {"include_usage": True}
#     (without it a stream carries no usage).
# openai_reply(data) -> dict   the answer as the book's message, from data["choices"][0]:
#     the message's content (None is no text) as one text block, then each tool call as
#     {"type": "toolCall", "id", "name", "arguments": json.loads(<its arguments>)};
#     stop_reason from OPENAI_STOPS, but "toolUse" whenever there are calls and the
#     finish_reason is in OPENAI_STOPS ("stop" and "length" too: some local servers say
#     "stop"); another finish_reason ("content_filter") makes a failed reply with
#     error_message f"finish_reason {it}", calls or not (the unknown finish wins);
#     arguments that are not a JSON object make a failed reply too, error_message
#     f"the arguments of call {id} are not a JSON object: {them}", its text kept, no calls;
#     an empty arguments string is no arguments, {} (a tool that takes none).
#     usage {"input": prompt_tokens, "output": completion_tokens}, {} if the server sent none.
# openai_events(sse) -> iterator   the book's stream events from the chunks:
#   - delta.content -> {"type": "text", "text"} (an empty or null one: nothing)
#   - delta.tool_calls[k]: the first piece of index i -> {"type": "call", "index": i, "id",
#     "name"}; every piece's function.arguments, if not empty -> {"type": "arguments",
#     "index": i, "json"}. Pieces are matched by "index", never by their order, and a later
#     piece that repeats the id starts nothing (some servers send it on every piece)
#   - finish_reason and usage are kept for the end (a later chunk where they are null changes
#     nothing); a chunk with "error" ->
#     {"type": "error", "message": f"{its type}: {its message}"}, and stop (an "error" that is
#     a plain string, as some servers send it: that string is the message)
#   - data "[DONE]" -> {"type": "end", "stop_reason", "usage"}, stop_reason mapped as in
#     openai_reply (a call seen makes it "toolUse"); a finish_reason not in OPENAI_STOPS, or
#     none at all: {"type": "error", "message": f"finish_reason {it}"}
#   - the events run out before [DONE]: {"type": "error", "message": "the stream ended
#     before [DONE]"}. Exactly one end or error, always last.
#@ code


def openai_messages(system, messages):
    """The transcript in Chat Completions' spelling. The system prompt is the first message; a
    call's arguments are JSON text; a result is a message of its own, and its is_error, which
    has no field here, is said in words so that the model still knows."""
    out = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m["role"] == "assistant":
            if not text_of(m) and not tool_calls(m):    # content is required without tool_calls
                continue
            message = {"role": "assistant", "content": text_of(m) or None}
            if tool_calls(m):
                message["tool_calls"] = [
                    {"id": c["id"], "type": "function",
                     "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                    for c in tool_calls(m)]
            out.append(message)
        elif m["role"] == "toolResult":
            prefix = FAILED_PREFIX if m["is_error"] else ""
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"],
                        "content": prefix + m["content"]})
        else:
            out.append({"role": "user", "content": m["content"]})
    return out


def openai_request(model, system, messages, tools, *, stream):
    """The body of one Chat Completions request."""
    body = {"model": model, "messages": openai_messages(system, messages)}
    if tools:
        body["tools"] = [{"type": "function", "function": {
            "name": t["name"], "description": t["description"], "parameters": t["parameters"]}}
            for t in tools]
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def _openai_usage(usage):
    """The book's usage from Chat Completions' counts; {} when the server sent none."""
    if not usage:
        return {}
    return {"input": usage.get("prompt_tokens", 0), "output": usage.get("completion_tokens", 0)}


def _openai_stop(finish, has_calls):
    """The book's stop_reason, or None for a finish the book has no name for. A reply with
    calls asks for tools whenever its finish_reason is one the book has a name for."""
    return "toolUse" if has_calls and finish in OPENAI_STOPS else OPENAI_STOPS.get(finish)


def openai_reply(data):
    """The first choice of a Chat Completions answer as the book's assistant message."""
    choice = data["choices"][0]
    message = choice.get("message") or {}
    content = [{"type": "text", "text": message["content"]}] if message.get("content") else []
    calls = message.get("tool_calls") or []
    failed = None if _openai_stop(choice.get("finish_reason"), bool(calls)) else (
        f"finish_reason {choice.get('finish_reason')}")
    for call in calls:
        text = call["function"]["arguments"] or "{}"
        try:
            arguments = json.loads(text)
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):   # no call is made of it: nobody knows what it says
            failed = failed or f"the arguments of call {call['id']} are not a JSON object: {text}"
        elif not failed:
            content.append({"type": "toolCall", "id": call["id"],
                            "name": call["function"]["name"], "arguments": arguments})
    if failed:
        return {"role": "assistant", "content": [b for b in content if b["type"] == "text"],
                "stop_reason": "error", "error_message": failed,
                "usage": _openai_usage(data.get("usage"))}
    return {"role": "assistant", "content": content,
            "stop_reason": _openai_stop(choice.get("finish_reason"), bool(calls)),
            "usage": _openai_usage(data.get("usage"))}


def openai_events(sse):
    """Chat Completions' chunks as the book's stream events. A call's pieces carry the index
    of the call they belong to; its id and name come with the first piece only."""
    started, finish, usage = set(), None, {}
    for item in sse:
        if item["data"] == "[DONE]":
            stop = _openai_stop(finish, bool(started))
            if stop is None:
                yield {"type": "error", "message": f"finish_reason {finish}"}
            else:
                yield {"type": "end", "stop_reason": stop, "usage": usage}
            return
        data = json.loads(item["data"])
        if data.get("error"):
            error = data["error"]
            yield {"type": "error", "message": f"{error.get('type')}: {error.get('message')}"
                   if isinstance(error, dict) else str(error)}
            return
        usage = _openai_usage(data.get("usage")) or usage
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                yield {"type": "text", "text": delta["content"]}
            for piece in delta.get("tool_calls") or []:
                index, function = piece.get("index", 0), piece.get("function") or {}
                if index not in started:
                    started.add(index)
                    yield {"type": "call", "index": index, "id": piece.get("id"),
                           "name": function.get("name")}
                if function.get("arguments"):
                    yield {"type": "arguments", "index": index, "json": function["arguments"]}
            finish = choice.get("finish_reason") or finish
    yield {"type": "error", "message": "the stream ended before [DONE]"}
#@ end
#@ block 16.4 given: a transport over urllib, and the provider's words
# -- HTTP: the bytes, the transport, the provider's words --



def urllib_transport(method, url, headers, body, timeout=120):
    """The default transport: one HTTP request with urllib, answered (status, headers, chunks),
    chunks an iterator of bytes read as they arrive. An HTTP error status is an answer, not an
    exception; a connection that cannot be made or breaks raises OSError."""
    import urllib.error
    import urllib.request
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, [error.read()]
    return response.status, {k.lower(): v for k, v in response.headers.items()}, _read(response)


def _read(response):
    """The body of `response`, in pieces as they come off the socket. A body cut off before its
    end raises http.client.IncompleteRead, which is no OSError: it comes up as ConnectionError,
    the broken connection it is."""
    import http.client
    with response:
        try:
            while chunk := response.read1(8192):
                yield chunk
        except http.client.HTTPException as error:
            raise ConnectionError(f"the body was cut off: {error!r}") from error


# Busy, or broken for a moment: ask again. Lesson 14's TRANSIENT, and the 5xx statuses a provider
# sends for a passing fault (not 501, which will not pass). RETRIES and BACKOFF are lesson 14's.
RETRY_STATUSES = TRANSIENT + (500, 502, 503, 504, 529)
MAX_WAIT = 30       # the most a Retry-After header may make us wait, in seconds
# The error types of a provider's passing fault, as anthropic_events and openai_events begin an
# error event's message ("overloaded_error: Overloaded"). Any other error event is an answer that
# would come again: a refusal ("finish_reason content_filter", "stop_reason refusal") or a request
# refused in the stream ("invalid_request_error: ...").
PASSING_ERRORS = ("overloaded_error", "api_error", "rate_limit_error", "server_error")


def passing(message):
    """True if an error event is worth another try, before the first piece: the provider's
    passing fault, or a stream cut before its end ("the stream ended before ...")."""
    return (message.split(":", 1)[0] in PASSING_ERRORS
            or message.startswith("the stream ended"))


def backoff(attempt, headers):
    """Seconds to wait before retry number `attempt` (from 1): what the provider's Retry-After
    asks, if it asks, up to MAX_WAIT; else BACKOFF doubled for each retry before."""
    try:
        return min(float(headers.get("retry-after")), MAX_WAIT)
    except (TypeError, ValueError):
        return BACKOFF * 2 ** (attempt - 1)


def provider_words(status, data):
    """What a provider said when it refused: "529 overloaded_error: Overloaded". Both formats
    put an error object in the body, {"error": {"type", "message"}} (OpenAI's type may be null,
    and then its code is used); a body that is not such JSON is quoted, cut at 200 characters."""
    text = data.decode("utf-8", "replace")
    try:
        error = json.loads(text)["error"]
    except (ValueError, KeyError, TypeError):
        return f"{status} {text.strip()[:200]}"
    if isinstance(error, str):
        return f"{status} {error}"
    return f"{status} {error.get('type') or error.get('code')}: {error.get('message')}"
#@ end
#@ block 16.4 given


class HttpModel:
    """A model behind an HTTP API: complete() and stream() as the scripted model has them, never
    an exception. A subclass says how its provider spells things: url(), headers(key), body(...),
    reply(data) and events(sse).

    HttpModel(model, *, base_url, key_env=None, transport=None, sleep=time.sleep,
              retries=RETRIES, environ=None)
    `transport(method, url, headers, body) -> (status, headers, chunks)` (urllib_transport if
    None) and `sleep` are injectable, so that every failure can be played without a network and
    without waiting. The key is read from environ[key_env] (os.environ if None) for each request
    and kept nowhere: not on the object, not in its repr, not in an error message."""

    KEY_ENV = ""

    def __init__(self, model, *, base_url, key_env=None, transport=None, sleep=time.sleep,
                 retries=RETRIES, environ=None):
        self.model, self.base_url = model, base_url.rstrip("/")
        self.key_env = key_env or self.KEY_ENV
        self.transport, self.sleep, self.retries = transport or urllib_transport, sleep, retries
        self.environ = os.environ if environ is None else environ

    def __repr__(self):
        return (f"{type(self).__name__}({self.model!r}, base_url={self.base_url!r}, "
                f"key from ${self.key_env})")

    def _key(self):
        """The key, read now; None when the variable is not set (a local server needs none)."""
        return self.environ.get(self.key_env) or None

    def _hide(self, text):
        """`text` with the key taken out, in case a provider or a proxy quoted it back."""
        key = self._key()
        return text.replace(key, "[the key]") if key else text

    def _post(self, system, messages, tools, stream):
        """Send one request; returns the transport's (status, headers, chunks)."""
        body = json.dumps(self.body(system, messages, tools, stream)).encode()
        return self.transport("POST", self.url(), self.headers(self._key()), body)
#@ end
#@ block 16.4 gap
#@ spec
    # Spec only. The tests import AnthropicModel and OpenAIModel, below, which are HttpModels:
    # write their two methods here, once for both.
    #
    # complete(system, messages, tools) -> dict   one request, self._post(..., stream=False),
    #     and the book's message. Never an exception for the provider's failure:
    #   - status 200: self.reply(the body's JSON); a body that is not what reply expects
    #     (ValueError, KeyError, TypeError, IndexError): error_message(f"unreadable answer: "
    #     f"{exc!r}")
    #   - another status: error_message(provider_words(status, body))
    #   - an OSError from the transport or from reading the body (refused, reset, timed out):
    #     error_message(f"connection failed: {exc}"). Only an OSError: any other exception from
    #     self._post (a bug in a body builder or a transport, Ctrl-C) goes up as it is, unretried
    #   - a status in RETRY_STATUSES, and an OSError, are first sent again, up to self.retries
    #     times, each after self.sleep(backoff(retry number, the answer's headers or {}))
    #   - every error_message goes through self._hide first
    # stream(system, messages, tools) -> iterator   self._post(..., stream=True), and yields
    #     self.events(read_sse(chunks)): the book's stream events, the last one an end or an
    #     error, exactly one of them. Never an exception for the provider's failure:
    #   - another status than 200: an error event with provider_words(...); retried first, as
    #     complete does, if the status is in RETRY_STATUSES
    #   - an error event that passing(its message) says is worth it, or an OSError: retried as
    #     complete does, but only while no piece (text, call, arguments) has been yielded. After
    #     a piece, never: the pieces are out, and a second answer would be glued onto the first.
    #     Any other error event (a refusal, a content filter) is yielded at once, as complete
    #     returns the same answer at once. An OSError after a piece is yielded as
    #     {"type": "error", "message": f"connection lost: {exc}"}; before any piece, the last
    #     attempt's OSError is "connection failed: {exc}", as in complete (nothing was lost)
    #   - data that cannot be read (ValueError, KeyError, TypeError, IndexError while the answer
    #     is read): one error event, f"unreadable stream: {exc!r}", not retried
    #   - any other exception goes up as it is, as in complete: every one from self._post but an
    #     OSError (a bug in a body builder or a transport, Ctrl-C), since no stream was read yet
    #   - every error message goes through self._hide first
#@ code

    def complete(self, system, messages, tools):
        """One request, answered with the book's message. A failure is a failed reply with the
        provider's words in it; a busy or broken moment is retried, with a pause, first."""
        attempt = 0
        while True:
            headers = {}
            try:
                status, headers, chunks = self._post(system, messages, tools, stream=False)
                data = b"".join(chunks)
            except OSError as exc:
                retry, words = True, f"connection failed: {exc}"
            else:
                if status == 200:
                    try:
                        return self.reply(json.loads(data))
                    except (ValueError, KeyError, TypeError, IndexError) as exc:
                        return error_message(self._hide(f"unreadable answer: {exc!r}"))
                retry, words = status in RETRY_STATUSES, provider_words(status, data)
            attempt += 1
            if not retry or attempt > self.retries:
                return error_message(self._hide(words))
            self.sleep(backoff(attempt, headers))

    def stream(self, system, messages, tools):
        """The reply as stream events, the last an end or an error. Retried only before the
        first piece: once text is out, asking again would write a second answer after it."""
        attempt, pieces = 0, 0
        while True:
            headers = {}
            try:
                status, headers, chunks = self._post(system, messages, tools, stream=True)
                try:                                  # the answer now, not the request
                    if status != 200:
                        retry, words = status in RETRY_STATUSES, provider_words(status,
                                                                                b"".join(chunks))
                    else:
                        retry, words = True, "the stream ended with no end"
                        for event in self.events(read_sse(chunks)):
                            if event["type"] == "error":    # a refusal would come again
                                retry, words = passing(event["message"]), event["message"]
                                break
                            yield event
                            if event["type"] == "end":
                                return
                            pieces += 1
                except (ValueError, KeyError, TypeError, IndexError) as exc:
                    retry, words = False, f"unreadable stream: {exc!r}"
            except OSError as exc:
                retry, words = True, f"connection {'lost' if pieces else 'failed'}: {exc}"
            attempt += 1
            if pieces or not retry or attempt > self.retries:
                yield {"type": "error", "message": self._hide(words)}
                return
            self.sleep(backoff(attempt, headers))
#@ end
#@ block 16.4 given


class AnthropicModel(HttpModel):
    """Anthropic's Messages API; the key from $ANTHROPIC_API_KEY."""

    KEY_ENV = "ANTHROPIC_API_KEY"

    def __init__(self, model, *, base_url="https://api.anthropic.com/v1", max_tokens=4096,
                 **options):
        super().__init__(model, base_url=base_url, **options)
        self.max_tokens = max_tokens

    def url(self):
        return self.base_url + "/messages"

    def headers(self, key):
        headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
        return {**headers, "x-api-key": key} if key else headers

    def body(self, system, messages, tools, stream):
        return anthropic_request(self.model, system, messages, tools,
                                 max_tokens=self.max_tokens, stream=stream)

    def reply(self, data):
        return anthropic_reply(data)

    def events(self, sse):
        return anthropic_events(sse)


class OpenAIModel(HttpModel):
    """The OpenAI-compatible Chat Completions API; the key from $OPENAI_API_KEY, and none sent
    when it is not set: a local server (Ollama, llama.cpp's server, vLLM) asks for none."""

    KEY_ENV = "OPENAI_API_KEY"

    def __init__(self, model, *, base_url="https://api.openai.com/v1", **options):
        super().__init__(model, base_url=base_url, **options)

    def url(self):
        return self.base_url + "/chat/completions"

    def headers(self, key):
        headers = {"content-type": "application/json"}
        return {**headers, "authorization": f"Bearer {key}"} if key else headers

    def body(self, system, messages, tools, stream):
        return openai_request(self.model, system, messages, tools, stream=stream)

    def reply(self, data):
        return openai_reply(data)

    def events(self, sse):
        return openai_events(sse)


def ask_first(tools, ask, allow=("read",)):
    """The tools, with every one not named in `allow` made to ask before it runs:
    ask(name, arguments) -> bool. A "no" is raised as PermissionError, so run_tool answers the
    model with a result it can read (is_error, nothing done) and the run goes on. The loop is
    not touched: the question lives in the tool. An async tool (lesson 15) stays async, so
    run_tool still awaits it and hands it the run's token."""
    def asking(tool):
        run = tool["execute"]

        def allowed(arguments):
            if not ask(tool["name"], arguments):
                raise PermissionError(f"The user said no to this {tool['name']} call, so it did "
                                      "not run. Ask them what they want instead.")

        if inspect.iscoroutinefunction(run):
            async def execute(arguments, signal=None):
                allowed(arguments)
                return await run(arguments, signal)
        else:
            def execute(arguments):
                allowed(arguments)
                return run(arguments)
        return {**tool, "execute": execute}
    return [tool if tool["name"] in allow else asking(tool) for tool in tools]
#@ end
