#@ block 14.2
import codecs
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
#@ code


def error_message(text):
    """An assistant message that says why a run stopped: nothing in `content`, stop_reason
    "error", and the reason in `error_message`. A stop is written into the record, not raised."""
    return {"role": "assistant", "content": [], "stop_reason": "error", "error_message": text}
#@ end
#@ block 2.2 given


# == 2 tools ==
# A tool is a dict. "name", "description" and "parameters" are advertised to the model.
# "execute" is a function, execute(arguments) -> str, that only this program ever runs.

#@ end
#@ block 4.1 gap
#@ spec
# Spec only. The tests import two names: str_arg and int_arg.
#
# The schema asks the model for arguments of some type, and nothing makes it send them. A tool
# reads its arguments through these two (lesson 6's tools all will), and a wrong one raises:
#   str_arg(arguments, name) -> str            arguments[name], if it is a string ("" is one).
#                                              Missing, or not a string:
#                                              ValueError(f"{name} must be a string")
#   int_arg(arguments, name, default) -> int   arguments[name], if it is an int (0 is one);
#                                              `default` if it is missing or None. Anything
#                                              else: ValueError(f"{name} must be an integer")
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
#                               a dict of its "name", "description" and "parameters". Never its
#                               "execute": the function stays in this program.
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
# appended anywhere. The caller puts it in the transcript. (A tool that breaks is lesson 4.)
#@ code


def run_tool(tools, call):
    """Run one tool call and return the toolResult message that answers it. One call in, exactly
    one result out: the model matches the result to its call by id, so it must never get two,
    or none. The caller puts the result into the transcript."""
    tools_by_name = {tool["name"]: tool for tool in tools}
    content = tools_by_name[call["name"]]["execute"](call["arguments"])
    return {"role": "toolResult", "tool_call_id": call["id"], "tool_name": call["name"],
            "content": content, "is_error": False}
#@ end
#@ block 4.1..15.1 gap
#@ spec
# Below is lesson 2's run_tool. Still one call in and exactly one result out, now on every path:
#   - a tool that raises: the result's content is str(exception), and is_error is True
#   - no tool of that name: content f"Tool {name} not found", is_error True
#   - otherwise what execute returned, is_error False
# Catch Exception, not BaseException: Ctrl-C is not the tool's news. run_tool never raises
# Exception. Tools just raise; this is the one place that turns a failure into a result.
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
#   - asyncio.CancelledError is not the tool's failure: it must go up, untouched. Catching
#     Exception already lets it through; never catch BaseException or CancelledError here
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
#     the budget: as many names as truncate_head keeps of them, one a line, and, if some are
#     left out, f" and {left} more" after the last one shown
#   - offset past the last line: ValueError(f"offset {offset} is past the end of {path}: "
#     f"{n} lines"). Offset 1 of an empty file is not past it: it returns ""
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
            names = ws.listdir(".")
            _, shown = truncate_head("".join(f"{name}\n" for name in names), max_lines, max_bytes)
            more = f" and {len(names) - shown} more" if shown < len(names) else ""
            raise FileNotFoundError(
                f"File not found: {path}. Files here: {', '.join(names[:shown])}{more}")
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
# error: execute returns it as an ordinary result and does not raise.
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
#     - append user_message(text) to it
#     - send the whole list: reply = model.complete(SYSTEM, messages, []) (the [] is the tools:
#       none yet)
#     - append the reply, exactly as it came back, and return it
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
#   - max_turns=None: at most that many model calls (None: no limit). Count the turns, and
#     check before the call, never after: when a turn would be number max_turns + 1, append
#     error_message(f"Agent stopped after max_turns={max_turns}") instead, and return
#   - a reply with stop_reason "error" (the provider failed) is appended like any other, and
#     then the run returns: none of it is acted on, even if it holds tool calls
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
# The prompt's message_end comes inside the first turn. A max_turns stop is a turn too: its
# error message is that turn's reply. Mutate, then announce: never yield a message_end before
# the message is on the list.
#@ code
def run_agent(model, system, messages, tools, prompt, *, max_turns=None):
    """Put `prompt` to the model and keep going until it stops asking for tools, a reply comes
    back failed (stop_reason "error"), or `max_turns` model calls have been made (None: no limit).

    A generator of events: plain dicts with a "type", which say what happened and draw nothing.
    They come in balanced pairs on every exit: agent_start ... agent_end around the run, and
    turn_start ... turn_end around each turn. The one ordering rule is mutate, then announce: a
    message is appended to `messages` (the caller's list, the record) first, and only then is its
    message_end yielded. The final message is the last of agent_end's "messages"."""
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
#   - before each model call: cancelled, the reply is error_message(CANCELLED_REPLY) instead of
#     a call; it is a failed reply like any other, so the run ends after it
#   - between two pieces of a stream: cancelled, close the stream, and the reply is
#     finished(<the partial message>, stop_reason="error", error_message=CANCELLED_REPLY)
#   - before each tool: cancelled, the call's result is cancelled_result(call), and the tool is
#     not run; every call of the batch still gets its one result
#   - once cancelled, ask() asks nobody: steering and follow-ups stay queued for the next run
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
    run's safe points. Before a model call, a cancel gives a failed reply, CANCELLED_REPLY, and
    the run ends as after any failed reply. Between two pieces of a streamed reply, it ends the
    reply there: what arrived is kept, in a failed reply with CANCELLED_REPLY. Before a tool, it
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
#     - a result whose call is nowhere is dropped: nobody knows that call's arguments
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
                     it) leaves every call it recorded with a result in the record, INTERRUPTED
                     for those cut short, and the listeners hear each one as a message_end."""
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
    # over it inside try, and in finally close it (run.close()) and clear the running flag.
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
    # Below is lesson 9's Harness. About 12 new lines, in three places:
    #   - __init__: a list of listeners, empty to start with
    #   - subscribe(self, listener): as the docstring says. The function it returns takes this
    #     listener off the list, and calling it a second time does nothing
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
        self._listeners.append(listener)

        def unsubscribe():
            if listener in self._listeners:
                self._listeners.remove(listener)
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
        self._listeners.append(listener)

        def unsubscribe():
            if listener in self._listeners:
                self._listeners.remove(listener)
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
    #   - cancel(): cancel self._token if a run is going on; idle, do nothing
    #   - _run hands run_agent signal=token
    #   - an asyncio.CancelledError coming through _run (its task was cancelled) cancels the
    #     token too, and goes on up: catch it, token.cancel(), raise
    #   - its finally, however the run ended: await run.aclose(); then, if the token is
    #     cancelled, the record's calls that have no result get one, INTERRUPTED
    #     (self._close_calls(), appended at the end of the record), and each message appended
    #     that way is announced to the listeners as a message_end (nobody may be left to
    #     consume it); last, even if a listener raised, self._token = None and the running
    #     flag is cleared
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
        self._listeners.append(listener)

        def unsubscribe():
            if listener in self._listeners:
                self._listeners.remove(listener)
        return unsubscribe

    def _notify(self, event):
        for listener in list(self._listeners):  # a copy: a listener may unsubscribe mid-walk
            listener(event)

    def _drain(self, queue):
        """What the loop is handed when it asks: the oldest queued message, one at a time."""
        return [queue.popleft()] if queue else []

    def _close_calls(self):
        """Append INTERRUPTED for every recorded call that has no result; return what was added."""
        answered = {m["tool_call_id"] for m in self._messages if m["role"] == "toolResult"}
        added = []
        for message in list(self._messages):
            for call in tool_calls(message) if message["role"] == "assistant" else []:
                if call["id"] not in answered:
                    answered.add(call["id"])
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
        try:
            async for event in run:
                self._notify(event)  # the listeners first: a consumer may never ask again
                yield event
        except asyncio.CancelledError:   # the task that runs this was cancelled: stop, as asked
            token.cancel()
            raise
        finally:  # exhausted, cancelled, closed by the consumer, its task cancelled, or dead
            try:
                await run.aclose()
                if token.cancelled:      # stopped from outside: no call is left without a result
                    for message in self._close_calls():   # nobody may be left to consume these
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
#   - prints text_of that message and returns True, or
#   - if it failed (stop_reason "error"), prints f"Error: {its error_message}" and returns False
#   - if there was none, prints nothing and returns False
#@ code


class FinalTextRenderer:
    """Only the answer, for `> answer.txt`: nothing is printed while the run goes on. finish()
    prints the text of the last assistant message and returns True; if that message failed
    (stop_reason "error") it prints "Error: <its error_message>" instead and returns False."""

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
#                     user_message(SUMMARY_PREFIX + summary)) takes the place of the first of them.
#                     Rows after them stay where they were. replay() is still the messages of
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
KEEP_RECENT = 2_000   # tokens of the newest messages kept word for word when compacting
SUMMARY_PREFIX = "Previous conversation summary:\n"
SUMMARY_SYSTEM = ("You summarise a conversation between a user and a coding agent. Do not continue "
                  "it and do not answer anything in it: write the summary and nothing else.")
SUMMARY_PROMPT = ("Summarise the conversation above for a model that will carry on the work from "
                  "it. Use exactly these sections: ## Goal, ## Constraints, ## Progress, "
                  "## Decisions, ## Next steps. Keep file names, commands and errors word for "
                  "word.")


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
#     result, and the kept part never starts on a tool result. The cut is never 0 itself (then
#     the next user message after index 0). It is 0 when the whole list is under keep_recent, or
#     when no user message follows.
#
# summarise(model, messages) -> str   asks `model` for a summary of `messages`: one request,
#     model.complete(SUMMARY_SYSTEM, context_for_model(messages) + [user_message(SUMMARY_PROMPT)],
#     []) with no tools at all, and returns the text of the reply, stripped. A failed reply raises
#     RuntimeError(f"the summary failed: {its error_message}"); an empty text raises
#     RuntimeError("the summary is empty"). An empty summary is an error, never a success.
#@ code


def find_cut(messages, keep_recent=KEEP_RECENT):
    """Where to cut: the first message kept whole; 0 means nothing to compact. The newest
    keep_recent tokens are kept, and the cut moves on to a user message, so a turn is never cut in
    half and no kept tool result loses its call."""
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
    carries on the work instead of describing it. Raises RuntimeError for a failed or empty
    reply: a compaction with nothing in its summary would throw the history away."""
    request = context_for_model(messages) + [user_message(SUMMARY_PROMPT)]
    reply = model.complete(SUMMARY_SYSTEM, request, [])
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
#@ block 12.2..15.1 gap
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
#         max_turns=None) is a harness over a log that meets the wall at most once a prompt.
#   .messages       log.replay(), worked out every time: a Session keeps no list of its own
#   .prompt(text)   a generator of events, in three steps:
#       1. before: if estimate_tokens(messages + [user_message(text)]) > window - reserve,
#          compact(log, model, keep_recent); if it did, yield {"type": "compaction",
#          "reason": "threshold"}
#       2. the run: a new Harness(model, system, tools, messages=log.replay(),
#          max_turns=max_turns) with persist_to(log) subscribed; yield every event of its
#          prompt(text)
#       3. after: if the record now ends with is_overflow, compact once; if it did, yield
#          {"type": "compaction", "reason": "overflow"} and retry once: a new Harness as in 2,
#          and every event of its prompt(None). Never a second compaction or a second retry:
#          a refusal after the retry stays in the record, for the caller to see.
#@ code


def is_overflow(message):
    """A refusal for length: a failed reply whose words say the request was too long. Providers
    word it differently and give it no code of their own, so the words are all there is."""
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
    """A harness over a log that meets the wall at most once a prompt: it compacts before a
    request the estimate says will not fit, and after a refusal for length it compacts once and
    retries once. Holds its settings and nothing else: the transcript is log.replay()."""

    def __init__(self, model, system, tools, log, *, window, reserve=RESERVE,
                 keep_recent=KEEP_RECENT, max_turns=None):
        self.model, self.system, self.tools, self.log = model, system, list(tools), log
        self.window, self.reserve, self.keep_recent = window, reserve, keep_recent
        self.max_turns = max_turns

    @property
    def messages(self):
        return self.log.replay()

    def _harness(self):
        """A harness on the log as it stands, saving to it."""
        h = Harness(self.model, self.system, self.tools, messages=self.log.replay(),
                    max_turns=self.max_turns)
        h.subscribe(persist_to(self.log))
        return h

    def prompt(self, text):
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
#@ block 15.1 given: Session, async


def is_overflow(message):
    """A refusal for length: a failed reply whose words say the request was too long. Providers
    word it differently and give it no code of their own, so the words are all there is."""
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
    """A harness over a log that meets the wall at most once a prompt: it compacts before a
    request the estimate says will not fit, and after a refusal for length it compacts once and
    retries once. Holds its settings and nothing else: the transcript is log.replay().
    Async from lesson 15: prompt is an async generator, over the harness's."""

    def __init__(self, model, system, tools, log, *, window, reserve=RESERVE,
                 keep_recent=KEEP_RECENT, max_turns=None):
        self.model, self.system, self.tools, self.log = model, system, list(tools), log
        self.window, self.reserve, self.keep_recent = window, reserve, keep_recent
        self.max_turns = max_turns

    @property
    def messages(self):
        return self.log.replay()

    def _harness(self):
        """A harness on the log as it stands, saving to it."""
        h = Harness(self.model, self.system, self.tools, messages=self.log.replay(),
                    max_turns=self.max_turns)
        h.subscribe(persist_to(self.log))
        return h

    async def prompt(self, text):
        estimate = estimate_tokens(self.messages + [user_message(text)])
        if estimate > self.window - self.reserve and compact(self.log, self.model,
                                                             self.keep_recent):
            yield {"type": "compaction", "reason": "threshold"}
        h = self._harness()
        async for event in h.prompt(text):
            yield event
        if h.messages and is_overflow(h.messages[-1]) and compact(self.log, self.model,
                                                                  self.keep_recent):
            yield {"type": "compaction", "reason": "overflow"}
            async for event in self._harness().prompt(None):   # once: a second refusal stays
                yield event
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
#       whose index is the piece's index. Never parsed here: a piece of JSON is not JSON
#     - any other type: the partial as it is
#
# stream_reply(stream) -> a generator of events, whose return value is the finished message.
#     `stream` yields stream events (see lab.pieces). Take the first one: if that raises, let it
#     go up, nothing announced (lesson 05: an exception from the model is not the loop's). Then
#     yield {"type": "message_start", "message": <the empty partial>}, and for each event:
#     - a piece (text, call, arguments): partial = grow(partial, piece), then yield
#       {"type": "message_update", "piece": piece, "message": partial}
#     - "end": return the finished message: role, content, stop_reason and usage from the end
#       event. In its content a toolCall is {"type", "id", "name", "arguments"}, its arguments
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
# Spec only. The tests import read_sse and Retrying here, and TerminalRenderer (region 5).
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
#
# Retrying(model, retries=RETRIES, sleep=time.sleep)   a model whose stream is tried again when
#     it fails before its first piece, and never after. .complete(...) is model.complete(...).
#     .stream(system, messages, tools) is a generator. Each try calls model.stream(...) and reads
#     its first event:
#     - a piece, or an end event: yield it and every event after it; no more tries
#     - an OSError raised (ConnectionError, TimeoutError), an error event whose message starts
#       with a status in TRANSIENT or of 500 and up, or no event at all: a failure worth a retry
#     - any other error event (a 400, say): yield it, and stop; a retry would be refused again
#     Before retry n (1, 2, ...) call sleep(BACKOFF * 2 ** (n - 1)). After `retries` retries,
#     yield {"type": "error", "message": <the last failure>}: f"{type(error).__name__}: {error}"
#     for an exception, the event's message, or STREAM_ENDED.
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


def _transient(message):
    """True if an error's message starts with a status worth another try."""
    status = message.split(" ", 1)[0]
    return status.isdigit() and (int(status) in TRANSIENT or int(status) >= 500)


class Retrying:
    """A model whose stream is tried again when it fails before its first piece, and never after:
    once a piece is out the user has seen it, and a second try would show it twice. The waiting
    goes through `sleep`, so a test or a page can count it instead of waiting."""

    def __init__(self, model, retries=RETRIES, sleep=time.sleep):
        self.model, self.retries, self.sleep = model, retries, sleep

    def complete(self, system, messages, tools):
        return self.model.complete(system, messages, tools)

    def stream(self, system, messages, tools):
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(BACKOFF * 2 ** (attempt - 1))
            stream = iter(self.model.stream(system, messages, tools))
            try:
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
