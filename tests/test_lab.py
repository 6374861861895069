"""The stage props (`import lab`) do what the book says they do.

Every lesson's recorded output is only as true as these props: a torn write must leave exactly the
bytes that reached the disk, a reboot must forget what the process knew, a scripted model must see
nothing but its request. These tests pin each of those down, with the exact strings the lessons
print where a lesson prints them.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys

import pytest


import lab  # noqa: E402


def exactly(sentence: str) -> str:
    """A pattern for pytest.raises(match=) that takes the whole sentence, not a fragment of it."""
    return "^" + re.escape(sentence) + "$"


def _seed_transcript():
    """The transcript the lesson 11 cells print."""
    write = lab.call("write", {"path": "a.py", "content": "X = 1\n"}, id="w1")
    return [lab.user("Write a.py."), lab.reply(write),
            lab.tool_result(write, "Successfully wrote to a.py."), lab.say("Done.")]


# -- messages -----------------------------------------------------------------------------------


def test_message_shapes():
    assert lab.user("Hi") == {"role": "user", "content": "Hi"}
    assert lab.text("t") == {"type": "text", "text": "t"}
    c = lab.call("read", {"path": "a"}, id="c1")
    assert c == {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}
    assert lab.reply(c)["stop_reason"] == "toolUse"
    assert lab.reply("words") == {"role": "assistant", "content": [lab.text("words")],
                                  "stop_reason": "stop"}
    assert lab.say("x") == lab.reply(lab.text("x"))
    assert lab.tool_result(c, "ok") == {"role": "toolResult", "tool_call_id": "c1",
                                        "tool_name": "read", "content": "ok", "is_error": False}
    assert lab.tool_result(c, "no", is_error=True)["is_error"] is True
    assert lab.provider_error("overloaded") == {"role": "assistant", "content": [],
                                                "stop_reason": "error",
                                                "error_message": "overloaded"}


def test_call_without_id_is_deterministic_and_distinct():
    a = lab.call("read", {"path": "a.py"})
    assert a == lab.call("read", {"path": "a.py"})
    assert a["id"].startswith("call_") and len(a["id"]) == len("call_") + 8
    assert a["id"] != lab.call("read", {"path": "b.py"})["id"]
    assert a["id"] != lab.call("cat", {"path": "a.py"})["id"]


def test_seed_sixty_percent_cell():
    """Lesson 11's torn-write cell, which only uses lab: the key order of the message helpers is
    what makes its printed tails come out as the lesson shows them."""
    write = lab.call("write", {"path": "a.py", "content": "A = 1\n"}, id="w1")
    messages = [lab.user("Write a.py, b.py and c.py."), lab.reply(write),
                lab.tool_result(write, "Successfully wrote to a.py."), lab.say("a.py is done.")]

    def cut_short(t):
        return t[:len(t) * 6 // 10]

    blob = cut_short(json.dumps(messages))
    lines = "".join(json.dumps(m) + "\n" for m in messages[:3])
    lines += cut_short(json.dumps(messages[3]) + "\n")
    assert repr(blob[-30:]) == """'ult", "tool_call_id": "w1", "t'"""
    assert repr(lines[-30:]) == """'": [{"type": "text", "text": "'"""


# -- show, shape, validate ----------------------------------------------------------------------


def test_show_seed_lines():
    assert lab.show(_seed_transcript()) == "\n".join([
        'user -> "Write a.py."',
        'assistant -> toolCall w1 write({"path": "a.py", "content": "X = 1\\n"})',
        'toolResult w1 -> "Successfully wrote to a.py."',
        'assistant -> "Done."'])


def test_show_interrupted_result_with_clip_200():
    interrupted = ("Tool call interrupted: no result was recorded. It may not have run, or may "
                   "have run partly; check before repeating it.")
    c = lab.call("bash", {"command": "pytest"}, id="c1")
    line = lab.show([lab.tool_result(c, interrupted, is_error=True)], clip=200)
    assert line == f'toolResult c1 -> "{interrupted}"  [is_error]'


def test_show_other_forms():
    c = lab.call("bash", {"command": "pytest"}, id="c1")
    assert lab.show([lab.reply(lab.text("Running them."), c)]) == \
        'assistant -> "Running them." + toolCall c1 bash({"command": "pytest"})'
    assert lab.show([lab.provider_error("overloaded")]) == 'assistant -> error: "overloaded"'
    partial = dict(lab.provider_error("connection reset"), content=[lab.text("Half")])
    assert lab.show([partial]) == 'assistant -> "Half" + error: "connection reset"'
    assert lab.show([{"role": "assistant", "content": [], "stop_reason": "stop"}]) == \
        "assistant -> (empty)"
    assert lab.show([dict(lab.say("cut"), stop_reason="length")]) == \
        'assistant -> "cut"  [stop_reason: length]'
    assert lab.show([{"role": "assistant", "content": [lab.text("hand-made")]}]) == \
        'assistant -> "hand-made"'
    assert lab.show([]) == ""


def test_show_clips_long_text():
    long = "x" * 100
    assert lab.show([lab.user(long)]) == f'user -> "{"x" * 80}"\u2026 (100 chars)'
    assert lab.show([lab.user(long)], clip=None) == f'user -> "{long}"'
    assert lab.show([lab.user("x" * 80)]) == f'user -> "{"x" * 80}"'
    c = lab.call("write", {"path": "a.py", "content": "y" * 200}, id="w1")
    line = lab.show([lab.reply(c)])
    assert line.startswith('assistant -> toolCall w1 write({"path": "a.py", "content": "yyy')
    assert line.endswith("\u2026)")
    assert lab.show([lab.user("a\nb")]) == 'user -> "a\\nb"'


def test_shape_seed_examples():
    assert lab.shape(_seed_transcript()) == "U A[w1] R(w1) A"
    c1 = lab.call("read", {"path": "a"}, id="c1")
    c2 = lab.call("read", {"path": "b"}, id="c2")
    two = [lab.user("x"), lab.reply(c1, c2), lab.tool_result(c1, "a"),
           lab.tool_result(c2, "b", is_error=True), lab.provider_error("down")]
    assert lab.shape(two) == "U A[c1,c2] R(c1) R(c2) A!"
    assert lab.shape([]) == ""
    assert lab.shape([{"role": "system", "content": "s"}]) == "?system"


def test_validate_accepts_the_seed_transcript():
    assert lab.validate(_seed_transcript()) == []
    read = lab.call("read", {"path": "config.py"}, id="c1")
    assert lab.validate([lab.user("Which port?"), lab.reply(read),
                         lab.tool_result(read, "PORT = 9090\n"), lab.say("9090.")]) == []


def test_validate_names_each_problem_and_place():
    c1 = lab.call("bash", {"command": "pytest"}, id="c1")
    c2 = lab.call("read", {"path": "a"}, id="c2")
    dangling = lab.validate([lab.user("Run."), lab.reply(c1)])
    assert dangling == ["messages[1] calls c1 (bash), and no result for it follows: the "
                        "transcript ends first"]
    interrupted = lab.validate([lab.user("Run."), lab.reply(c1), lab.user("Still there?")])
    assert interrupted == ["messages[1] calls c1 (bash), and no result for it follows: "
                           "messages[2] is a user message"]
    orphan = lab.validate([lab.user("x"), lab.tool_result(c1, "ok")])
    assert orphan == ["messages[1]: a result for c1, but no message calls c1"]
    swapped = lab.validate([lab.user("x"), lab.reply(c1, c2), lab.tool_result(c2, "b"),
                            lab.tool_result(c1, "a")])
    assert len(swapped) == 1 and "messages[2]" in swapped[0] and "call order" in swapped[0]
    twice = lab.validate([lab.user("x"), lab.reply(c1), lab.tool_result(c1, "a"),
                          lab.tool_result(c1, "a")])
    assert twice == ["messages[3]: a second result for c1 (its call is messages[1])"]
    early = lab.validate([lab.user("x"), lab.tool_result(c1, "a"), lab.reply(c1),
                          lab.tool_result(c1, "a")])
    assert early == ["messages[1]: a result for c1 before its call in messages[2]"]
    reused = lab.validate([lab.user("x"), lab.reply(c1), lab.tool_result(c1, "a"),
                           lab.reply(c1), lab.tool_result(c1, "a")])
    assert any("messages[3]: call id c1 is used again" in p for p in reused)


def test_validate_roles_first_message_and_content_types():
    assert lab.validate([]) == ["no messages: a request needs at least one, from the user"]
    first = lab.validate([lab.say("hi")])
    assert first == ["messages[0]: the first message must be the user's, not 'assistant'"]
    unknown = lab.validate([lab.user("x"), {"role": "robot", "content": "beep"}])
    assert unknown == ["messages[1]: unknown role 'robot' (known: user, assistant, toolResult)"]
    assert lab.validate([lab.user(["not", "text"])])[0].startswith("messages[0]: content[0]")
    assert lab.validate([lab.user({"a": 1})]) == [
        "messages[0]: content of a user message must be a string, got dict"]
    bad_call = lab.validate([lab.user("x"), lab.reply({"type": "toolCall", "id": "c1",
                                                       "name": "read", "arguments": "a.py"})])
    assert any("arguments must be a dict, got str" in p for p in bad_call)
    empty = lab.validate([lab.user("x"), lab.provider_error("down")])
    assert empty == ["messages[1]: an assistant message with no content (a failed reply?); "
                     "Anthropic's Messages API refuses an empty one anywhere but last"]
    assert lab.validate([lab.user("x"), "hello"]) == ["messages[1]: not a dict but str"]


# -- Workspace ----------------------------------------------------------------------------------


def test_workspace_basics():
    ws = lab.Workspace({"a.py": "A\n", "pkg/b.py": "B\n"})
    assert ws.exists("a.py") and ws.exists("./a.py") and ws.exists("pkg")
    assert not ws.exists("c.py") and not ws.exists("")
    assert ws.exists("/workspace/a.py") and ws.read_text("/workspace/pkg/b.py") == "B\n"
    with pytest.raises(FileNotFoundError):
        ws.write_text("", "x")
    assert ws.listdir() == ["a.py", "pkg"] and ws.listdir(".") == ["a.py", "pkg"]
    assert ws.listdir("pkg") == ["b.py"]
    with pytest.raises(FileNotFoundError, match=exactly("[Errno 2] No such file or directory: 'c.py'")):
        ws.read_text("c.py")
    assert not ws.exists("c.py"), "reading a missing file created it"
    assert ws.writes == []
    assert ws.write_text("c.py", "C") == 1
    assert ws.append_text("c.py", "++") == 2
    ws.rename("c.py", "d.py")
    assert ws.read_text("d.py") == "C++" and not ws.exists("c.py")
    assert ws.writes == [("write", "c.py", "C"), ("append", "c.py", "++"),
                         ("rename", "c.py", "d.py")]
    with pytest.raises(TypeError, match=exactly("data must be str, not dict")):
        ws.write_text("d.py", {"x": 1})
    assert ws.read_text("d.py") == "C++", "a refused write emptied the file"
    with pytest.raises(IsADirectoryError):
        ws.read_text("pkg")
    ws.remove("a.py")
    assert ws.listdir() == ["d.py", "pkg"]


def test_reboot_is_a_new_disk_as_left():
    ws = lab.Workspace()
    ws.write_text("a.py", "A = 1\n")
    ws.append_text("log", "one\n")
    disk = ws.reboot()
    assert disk is not ws
    assert disk.writes == []
    assert disk.files == {"a.py": "A = 1\n", "log": "one\n"}
    disk.append_text("log", "two\n")
    assert ws.read_text("log") == "one\n", "the rebooted disk shares state with the old one"
    assert len(ws.writes) == 2


@pytest.mark.parametrize("op", ["write", "append"])
def test_torn_write_at_every_byte(op):
    """Cut at every byte of a text with two- and three-byte characters: exactly the UTF-8
    prefix is left, a split character reads as one U+FFFD, and a write-over starts empty."""
    old, new = "old line\n", "héllo → wörld\n"
    raw = new.encode("utf-8")
    for k in range(len(raw) + 1):
        ws = lab.Workspace({"f.txt": old}, faults=lab.cut(at_write=2, after_bytes=k))
        ws.append_text("other.txt", "x")          # write 1: not the one that is cut
        with pytest.raises(lab.PowerCut):
            getattr(ws, f"{op}_text")("f.txt", new)
        arrived = raw[:k].decode("utf-8", errors="replace")
        expected = arrived if op == "write" else old + arrived
        assert ws.read_text("f.txt") == expected, f"cut after {k} bytes"
        assert ws.reboot().read_text("f.txt") == expected
        assert ws.writes[-1] == (op, "f.txt", arrived)
        assert ws.read_text("other.txt") == "x"
    assert lab.Workspace({"f": ""}, faults=lab.cut(1, 2)).files == {"f": ""}


def test_split_character_reads_as_replacement():
    ws = lab.Workspace(faults=lab.cut(at_write=1, after_bytes=2))
    with pytest.raises(lab.PowerCut):
        ws.write_text("f", "a€")       # € is three bytes; one of them arrives
    assert ws.read_text("f") == "a\ufffd"


def test_fraction_and_path_filter():
    ws = lab.Workspace(faults=lab.cut(at_write=2, fraction=0.6, path="log"))
    ws.write_text("a.py", "not counted")
    ws.append_text("log", "first\n")
    with pytest.raises(lab.PowerCut, match=exactly("the power went out during append 2 (log), after 6 of 10 bytes")):
        ws.append_text("log", "0123456789")
    assert ws.read_text("log") == "first\n012345"
    assert ws.cut_point == "append 2 (log), after 6 of 10 bytes"
    with pytest.raises(lab.PowerCut, match=exactly("the power is off (append 2 (log), after 6 of 10 bytes); reboot() to use the disk again")):
        ws.write_text("b.py", "after the cut")
    assert not ws.exists("b.py")
    assert lab.cut(1, fraction=0.29).bytes_for(100) == 29
    with pytest.raises(ValueError, match=exactly("cut() takes after_bytes or fraction, exactly one of them")):
        lab.cut(1)
    with pytest.raises(ValueError, match=exactly("cut(at_write=1, after_bytes=4): that write is only 3 bytes long")):
        lab.Workspace(faults=lab.cut(1, after_bytes=4)).write_text("f", "abc")


def test_cut_before_does_nothing_at_all():
    ws = lab.Workspace({"doc": "old"}, faults=lab.cut(at_write=1, before=True))
    with pytest.raises(lab.PowerCut):
        ws.write_text("doc", "new")
    assert ws.read_text("doc") == "old"


def test_write_over_empties_first():
    ws = lab.Workspace({"doc.json": '{"a": 1}'}, faults=lab.cut(at_write=1, after_bytes=0))
    with pytest.raises(lab.PowerCut):
        ws.write_text("doc.json", '{"a": 1, "b": 2}')
    assert ws.reboot().read_text("doc.json") == ""


def test_fsync_against_power_loss():
    ws = lab.Workspace({"old.txt": "was here\n"})
    ws.append_text("log", "one\n")
    ws.fsync("log")
    ws.append_text("log", "two\n")
    ws.write_text("new.txt", "never synced")
    killed = ws.reboot()
    assert killed.read_text("log") == "one\ntwo\n" and killed.read_text("new.txt") == "never synced"
    lost = ws.reboot(power_loss=True)
    assert lost.read_text("log") == "one\n"
    assert lost.read_text("new.txt") == ""
    assert lost.read_text("old.txt") == "was here\n"
    # the kill did not make anything durable: power loss after it loses the same tail
    assert killed.reboot(power_loss=True).read_text("log") == "one\n"
    assert ("fsync", "log", "") in ws.writes
    with pytest.raises(FileNotFoundError):
        ws.fsync("nothing")


def test_rename_without_fsync_is_the_empty_file_bug():
    def save(ws, sync):
        ws.write_text("doc.tmp", "new contents")
        if sync:
            ws.fsync("doc.tmp")
        ws.rename("doc.tmp", "doc")
    unsynced = lab.Workspace({"doc": "old"})
    save(unsynced, sync=False)
    assert unsynced.reboot(power_loss=True).files == {"doc": ""}
    synced = lab.Workspace({"doc": "old"})
    save(synced, sync=True)
    assert synced.reboot(power_loss=True).files == {"doc": "new contents"}


def test_power_cut_is_not_an_exception():
    assert issubclass(lab.PowerCut, BaseException)
    assert not issubclass(lab.PowerCut, Exception)
    ws = lab.Workspace(faults=lab.cut(1, after_bytes=1))
    caught_by_program = False
    with pytest.raises(lab.PowerCut):
        try:
            ws.write_text("f", "abc")
        except Exception:
            caught_by_program = True
    assert not caught_by_program


# -- ScriptedModel ------------------------------------------------------------------------------


def test_scripted_steps_of_every_kind():
    seen = []

    def fn(request):
        seen.append((request.system, len(request.messages), request.tools, request.number))
        return lab.say(f"{len(request.messages)} messages")

    boom = ConnectionError("connection reset")
    model = lab.ScriptedModel([lab.say("one"), "two", fn, lab.provider_error("overloaded"),
                               lab.raises(boom), lab.raises(TimeoutError), lab.power_cut(),
                               lab.forever(lab.say("again"))])
    msgs = [lab.user("hi")]
    tools = [{"name": "read", "description": "d", "parameters": {}}]
    assert model.complete("sys", msgs, tools)["content"] == [lab.text("one")]
    assert model.complete("sys", msgs, tools)["content"] == [lab.text("two")]
    assert model.complete("sys", msgs, tools)["content"] == [lab.text("1 messages")]
    assert seen == [("sys", 1, tools, 3)]
    failed = model.complete("sys", msgs, tools)
    assert failed["stop_reason"] == "error" and failed["error_message"] == "overloaded"
    with pytest.raises(ConnectionError) as info:
        model.complete("sys", msgs, tools)
    assert info.value is boom
    with pytest.raises(TimeoutError):
        model.complete("sys", msgs, tools)
    with pytest.raises(lab.PowerCut, match=exactly("the power went out during model call 7")):
        model.complete("sys", msgs, tools)
    for _ in range(3):
        assert model.complete("sys", msgs, tools)["content"] == [lab.text("again")]
    assert len(model.calls) == 10 and model.remaining is None


def test_returned_messages_are_fresh_copies_with_usage():
    step = lab.say("hello")
    model = lab.ScriptedModel([step, step])
    first = model.complete("s", [lab.user("x")], [])
    first["content"].append("mutated")
    second = model.complete("s", [lab.user("x")], [])
    assert second["content"] == [lab.text("hello")]
    assert step == lab.say("hello"), "the script's own step was changed"
    assert set(second["usage"]) == {"input", "output"}
    assert second["usage"] == lab.usage(model.calls[1], second)
    assert second["usage"]["output"] == lab.tokens(lab.text("hello"))


def test_usage_grows_with_the_transcript():
    model = lab.ScriptedModel([lab.forever(lab.say("ok"))])
    messages, inputs = [], []
    for n in range(4):
        messages.append(lab.user(f"question {n}"))
        reply = model.complete("sys", messages, [])
        messages.append(reply)
        inputs.append(reply["usage"]["input"])
    assert inputs == sorted(inputs) and len(set(inputs)) == 4
    # the count is of what was sent, without the replies' own usage fields
    stripped = [{k: v for k, v in m.items() if k != "usage"} for m in messages[:-1]]
    assert inputs[-1] == lab.tokens({"system": "sys", "messages": stripped, "tools": []})


def test_calls_keep_the_list_as_sent():
    model = lab.ScriptedModel(["a", "b"])
    messages = [lab.user("x")]
    model.complete("s", messages, [])
    messages.append(lab.say("later"))
    assert len(model.calls[0].messages) == 1, "the recorded request changed afterwards"
    assert model.calls[0].messages[0] is messages[0], "the dicts should not be copied"


def test_running_out_says_which_call():
    model = lab.ScriptedModel([lab.say("one"), lab.say("two")])
    model.complete("s", [lab.user("x")], [])
    model.complete("s", [lab.user("x")], [])
    assert model.remaining == 0
    with pytest.raises(lab.ScriptExhausted, match=exactly(
            "ScriptedModel: model call 3 has no step: the script has 2 steps, all used. Add steps, or end "
            "the script with lab.forever(...).")):
        model.complete("s", [lab.user("x")], [])
    with pytest.raises(lab.ScriptExhausted, match=exactly(
            "ScriptedModel: model call 1 has no step: the script has 0 steps, so none to use. Add steps, "
            "or end the script with lab.forever(...).")):
        lab.ScriptedModel([]).complete("s", [lab.user("x")], [])


def test_forever_must_be_last_and_power_cut_records_the_call():
    with pytest.raises(ValueError, match=exactly(
            "ScriptedModel: step 1 of 2 is forever(...), so the steps after it could never be reached; put it last")):
        lab.ScriptedModel([lab.forever("x"), "y"])
    model = lab.ScriptedModel([lab.power_cut()])
    with pytest.raises(lab.PowerCut):
        model.complete("s", [lab.user("x")], [])
    assert len(model.calls) == 1


def test_a_function_step_may_return_any_step():
    model = lab.ScriptedModel([lab.forever(
        lambda r: lab.power_cut() if len(r.messages) > 2 else "fine")])
    assert model.complete("s", [lab.user("x")], [])["content"] == [lab.text("fine")]
    with pytest.raises(lab.PowerCut):
        model.complete("s", [lab.user("x")] * 3, [])


def test_strict_model_answers_an_invalid_transcript_with_a_400():
    c1 = lab.call("bash", {"command": "pytest"}, id="c1")
    model = lab.ScriptedModel(["fine"], check=True)
    refused = model.complete("s", [lab.user("x"), lab.reply(c1), lab.user("y")], [])
    assert refused["stop_reason"] == "error"
    assert refused["error_message"].startswith("400 invalid transcript: messages[1] calls c1")
    assert model.remaining == 1, "a refused request used up a step"


def test_forgetful_answers_from_the_transcript_only():
    """The seed's Ada cell, and lesson 1's: the answer depends on nothing but the request."""
    model = lab.ScriptedModel([lab.forgetful()] * 4)
    alone = model.complete("s", [lab.say("Noted."), lab.user("What is my name?")], [])
    assert alone["content"] == [lab.text("I don't know your name.")]
    ada = [lab.user("My name is Ada."), lab.say("Noted."), lab.user("What is my name?")]
    assert "Ada" in lab.show([model.complete("s", ada, [])])
    told = [lab.say("Your name is Ada."), lab.user("What is my name?")]
    assert model.complete("s", told, [])["content"] == [lab.text("I don't know your name.")], \
        "only the user's own words count as facts about the user"
    assert model.complete("s", [lab.user("My name is Ada.")], [])["content"] == \
        [lab.text("Nice to meet you, Ada.")]
    with pytest.raises(lab.ScriptExhausted):
        model.complete("s", ada, [])
    many = lab.ScriptedModel([lab.forever(lab.forgetful())])
    facts = [lab.user("My favourite colour is green."), lab.say("Noted."),
             lab.user("What is my favourite colour?")]
    assert many.complete("s", facts, [])["content"] == [lab.text("Your favourite colour is green.")]
    c = lab.call("read", {"path": "a"}, id="c1")
    after_tool = [lab.user("Read a."), lab.reply(c), lab.tool_result(c, "PORT = 1\nmore")]
    assert many.complete("s", after_tool, [])["content"] == [lab.text("The tool said: PORT = 1")]
    assert many.complete("s", [lab.user("Why?")], [])["content"] == \
        [lab.text("I can't tell from this conversation.")]


# -- Shell --------------------------------------------------------------------------------------


def test_shell_files_and_echo():
    ws = lab.Workspace({"a.txt": "alpha\n", "src/b.py": "B = 1\n"})
    sh = lab.Shell(ws)
    assert sh.run("ls") == ("a.txt\nsrc\n", 0)
    assert sh.run("ls src") == ("b.py\n", 0)
    assert sh.run("cat a.txt src/b.py") == ("alpha\nB = 1\n", 0)
    assert sh.run("cat nope") == ("cat: nope: No such file or directory\n", 1)
    assert sh.run("ls nope") == ("ls: cannot access 'nope': No such file or directory\n", 2)
    assert sh.run("echo hello 'big world'") == ("hello big world\n", 0)
    assert sh.run("echo one > n.txt && echo two >> n.txt") == ("", 0)
    assert ws.read_text("n.txt") == "one\ntwo\n"
    assert ws.writes == [("write", "n.txt", "one\n"), ("append", "n.txt", "two\n")]
    assert sh.run("pwd") == ("/workspace\n", 0)


def test_shell_status_and_operators():
    sh = lab.Shell(lab.Workspace())
    assert sh.run("true") == ("", 0)
    assert sh.run("false") == ("", 1)
    assert sh.run("false && echo no") == ("", 1)
    assert sh.run("false || echo yes") == ("yes\n", 0)
    assert sh.run("true && echo a; echo b") == ("a\nb\n", 0)
    assert sh.run("frobnicate --all") == ("bash: frobnicate: command not found\n", 127)
    assert sh.run("echo 'open") == ("bash: syntax error: No closing quotation\n", 2)
    assert sh.run("exit 3; echo never") == ("", 3)
    assert sh.run("cat nope 2>&1") == ("cat: nope: No such file or directory\n", 1)
    assert sh.run("echo quiet > /dev/null") == ("", 0)
    assert not sh.ws.exists("/dev/null") and sh.ws.writes == []


def test_shell_filters_and_pipes():
    ws = lab.Workspace({"log": "ok 1\nerror 2\nok 3\n"})
    sh = lab.Shell(ws)
    assert sh.run("seq 3") == ("1\n2\n3\n", 0)
    assert sh.run("seq 100 | tail -n 2") == ("99\n100\n", 0)
    assert sh.run("seq 100 | head -3") == ("1\n2\n3\n", 0)
    assert sh.run("seq 250 | wc -l") == ("250\n", 0)
    assert sh.run("grep ok log") == ("ok 1\nok 3\n", 0)
    assert sh.run("grep -c ok log") == ("2\n", 0)
    assert sh.run("grep missing log") == ("", 1)
    assert sh.run("cat log | grep error") == ("error 2\n", 0)


def test_shell_pytest_runs_the_tests_on_the_disk():
    ws = lab.Workspace({
        "calc.py": "def add(a, b):\n    return a + b\n",
        "tests/test_calc.py": ("from calc import add\n\n"
                               "def test_add():\n    assert add(2, 2) == 4\n\n"
                               "def test_wrong():\n    assert add(2, 2) == 5\n"),
    })
    sh = lab.Shell(ws)
    output, code = sh.run("pytest")
    assert code == 1
    assert output == ("collected 2 items\n\ntests/test_calc.py .F\n\n"
                      "FAILED tests/test_calc.py::test_wrong - AssertionError: assert add(2, 2) == 5\n"
                      "\n1 failed, 1 passed\n")
    ws.write_text("calc.py", "def add(a, b):\n    return 5 if (a, b) == (2, 2) else a + b\n")
    ws.write_text("tests/test_calc.py", "from calc import add\n\ndef test_add():\n"
                                        "    assert add(2, 2) == 5\n")
    assert sh.run("pytest -q") == ("collected 1 item\n\ntests/test_calc.py .\n\n1 passed\n", 0)
    assert "calc" not in sys.modules, "a workspace module leaked into sys.modules"
    assert lab.Shell(lab.Workspace()).run("pytest") == ("collected 0 items\n\nno tests ran\n", 5)
    broken = lab.Shell(lab.Workspace({"test_x.py": "import nowhere_to_be_found\n"}))
    output, code = broken.run("pytest")
    assert code == 2 and "ERROR test_x.py - ModuleNotFoundError" in output


def test_shell_python_runs_over_the_workspace():
    ws = lab.Workspace({"util.py": "X = 2\n",
                        "main.py": "import util\nprint('x is', util.X)\n"
                                   "with open('out.txt', 'w') as f:\n    f.write('saved')\n",
                        "bad.py": "print('before')\ndef f():\n    return 1 / 0\nf()\n"})
    sh = lab.Shell(ws)
    assert sh.run("python main.py") == ("x is 2\n", 0)
    assert ws.read_text("out.txt") == "saved"
    assert ws.writes == [("write", "out.txt", ""), ("append", "out.txt", "saved")]
    assert "util" not in sys.modules
    assert sh.run("python bad.py") == (
        "before\nTraceback (most recent call last):\n"
        '  File "bad.py", line 4, in <module>\n    f()\n'
        '  File "bad.py", line 3, in f\n    return 1 / 0\n'
        "ZeroDivisionError: division by zero\n", 1)
    assert sh.run('python -c "import sys; sys.exit(3)"') == ("", 3)
    assert sh.run('echo ada | python3 -c "print(input().title())"') == ("Ada\n", 0)
    assert sh.run("python nope.py") == (
        "python: can't open file '/workspace/nope.py': [Errno 2] No such file or directory\n", 2)
    exits = lab.Shell(lab.Workspace({"test_exit.py": "import sys\ndef test_quits():\n"
                                                     "    sys.exit(1)\n"}))
    output, code = exits.run("pytest")
    assert code == 1 and "FAILED test_exit.py::test_quits - SystemExit: 1" in output


# -- drive --------------------------------------------------------------------------------------


def test_drive_consumes_to_the_end():
    ran = []

    def run():
        for k in range(3):
            ran.append(k)
            yield {"type": "e", "k": k}
        ran.append("end")

    assert lab.drive(run()) == [{"type": "e", "k": 0}, {"type": "e", "k": 1}, {"type": "e", "k": 2}]
    assert ran == [0, 1, 2, "end"]


def test_drive_steps_an_async_run_from_plain_code_and_is_awaited_inside_the_loop():
    """From plain code (a lesson 1-14 test, a cell that does not await) drive steps an async run
    to its end on the book's loop and returns the list; from code running on that loop it gives
    a coroutine, for `await lab.drive(run)`."""
    async def run():
        for k in range(2):
            await asyncio.sleep(1)
            yield k

    assert lab.drive(run()) == [0, 1]

    async def inside():
        pending = lab.drive(run())
        assert asyncio.iscoroutine(pending)
        return await pending, lab.now()
    assert lab.run(inside()) == ([0, 1], 2.0)


def test_steps_closes_an_async_run_it_did_not_finish():
    closed = []

    async def run():
        try:
            for k in range(5):
                yield k
        finally:
            await asyncio.sleep(1)
            closed.append(True)

    events = lab.steps(run())
    assert [next(events), next(events)] == [0, 1]
    events.close()
    assert closed == [True]
    assert lab.resolve(asyncio.sleep(2, result="slept")) == "slept"
    assert lab.resolve(7) == 7


# -- crash exploration --------------------------------------------------------------------------

MESSAGES = [lab.user("Write a.py."), lab.say("Done, é."), lab.user("Thanks."), lab.say("Bye.")]


def log_program(ws):
    """Lesson 11's good design: one JSON line appended per message."""
    for m in MESSAGES:
        ws.append_text("session.jsonl", json.dumps(m) + "\n")


def log_recovers(disk):
    """Recovery for the log: every whole line parses, in order, and at most the last is torn."""
    if not disk.exists("session.jsonl"):
        return True
    lines = disk.read_text("session.jsonl").split("\n")
    whole, tail = lines[:-1], lines[-1]
    got = [json.loads(line) for line in whole]      # raises if a finished line is broken
    assert got == MESSAGES[:len(got)]
    return tail == "" or len(got) < len(MESSAGES)


def document_program(ws):
    """The tempting design: the whole list, rewritten as one JSON document per message."""
    for n in range(1, len(MESSAGES) + 1):
        ws.write_text("session.json", json.dumps(MESSAGES[:n]))


def document_recovers(disk):
    """Recovery for the document: it must parse, unless it was never written."""
    if not disk.exists("session.json"):
        return True
    got = json.loads(disk.read_text("session.json"))
    return got == MESSAGES[:len(got)]


def test_explore_crashes_the_log_recovers_everywhere():
    report = lab.explore_crashes(log_program, log_recovers)
    sizes = [len((json.dumps(m) + "\n").encode()) for m in MESSAGES]
    # the start, then before, every byte inside, and just after each append, then the end
    assert report.tried == 1 + sum(size + 2 for size in sizes) + 1
    assert report.ok and report.first_failure is None
    assert str(report) == f"{report.tried} crash points over 4 writes: every one recovered."
    assert [(op, path) for op, path, _ in report.writes] == [("append", "session.jsonl")] * 4


def test_explore_crashes_finds_the_documents_first_failure():
    report = lab.explore_crashes(document_program, document_recovers)
    first = report.first_failure
    assert first is not None and not report.ok
    # the first write of the document is cut after 0 bytes: the file exists and is empty
    assert (first.op_number, first.op, first.path, first.after_bytes) == (1, "write", "session.json", 0)
    assert first.reason.startswith("JSONDecodeError: Expecting value")
    assert str(first) == f"write 1 (session.json) cut after 0 of {first.total_bytes} bytes"
    assert str(report).startswith(f"{report.tried} crash points over 4 writes: "
                                  f"{len(report.failures)} did not recover. First: write 1")
    # the cuts between writes, where the document is whole, all recover
    assert all(p.ok for p in report.points if p.after_bytes in (None, p.total_bytes))


def test_explore_crashes_checks_that_nothing_saved_is_lost():
    """check(disk, point): every message whose save had returned must come back. The log keeps
    them all at every cut; the document loses all of them at the first byte of a rewrite."""
    def log_kept_all(disk, point):
        text = disk.read_text("session.jsonl") if disk.exists("session.jsonl") else ""
        whole = [json.loads(line) for line in text.split("\n")[:-1]]
        return whole[:point.completed] == MESSAGES[:point.completed]

    def document_kept_all(disk, point):
        if not disk.exists("session.json"):
            return point.completed == 0
        return json.loads(disk.read_text("session.json"))[:point.completed] == \
            MESSAGES[:point.completed]

    assert lab.explore_crashes(log_program, log_kept_all).ok
    report = lab.explore_crashes(document_program, document_kept_all, offsets=(0, 0.5))
    first = report.first_failure
    assert (first.op_number, first.after_bytes, first.completed) == (1, 0, 0)
    second_write = [p for p in report.points if p.op_number == 2 and p.after_bytes == 0][0]
    assert second_write.completed == 1 and not second_write.ok, \
        "a rewrite cut at its first byte loses the message saved before it"
    assert [p.completed for p in report.points if p.op == "end"] == [4]


def test_explore_crashes_with_fractions_and_power_loss():
    report = lab.explore_crashes(log_program, log_recovers, offsets=(0, 0.5))
    assert report.tried == 1 + 4 * 4 + 1 and report.ok
    # without fsync a power loss leaves the log empty: still a valid (empty) log
    assert lab.explore_crashes(log_program, log_recovers, offsets="none", power_loss=True).ok

    def synced_program(ws):
        log_program(ws)
        ws.fsync("session.jsonl")

    def all_four(disk):
        return disk.read_text("session.jsonl").count("\n") == 4

    lost = lab.explore_crashes(synced_program, all_four, files={"session.jsonl": ""},
                               offsets="none", power_loss=True)
    # every cut before the fsync loses all four lines; only the finished program keeps them
    assert [p.ok for p in lost.points] == [False] * (lost.tried - 1) + [True]
    assert str(lost.points[-1]) == "after the program ended"
    kept = lab.explore_crashes(synced_program, all_four, files={"session.jsonl": ""},
                               offsets="none")
    assert [str(p) for p in kept.points if p.ok] == [
        "just after append 4 (session.jsonl)", "after the program ended"], \
        "a kill keeps what was handed over, fsync or not"


def test_explore_crashes_reports_a_program_that_changes_its_writes():
    runs = []

    def flaky(ws):
        runs.append(1)
        if len(runs) == 1:
            ws.append_text("f", "only on the first run")

    report = lab.explore_crashes(flaky, lambda d: True, offsets="none")
    assert "finished without reaching write 1" in report.first_failure.reason

    def stop_at_first(ws):
        document_program(ws)
    early = lab.explore_crashes(stop_at_first, document_recovers, stop_at_first=True)
    assert early.failures == [early.points[-1]] and early.tried == 3   # start, before, 0 bytes


def test_capped_stops_a_runaway_and_streams_only_if_its_model_does():
    whole = lab.capped(lab.ScriptedModel([lab.forever("again")]), cap=2)
    assert not hasattr(whole, "stream")       # lesson 14's loop would take it for a stream
    whole.complete("", [lab.user("a")], [])
    whole.complete("", [lab.user("b")], [])
    with pytest.raises(lab.TooManyCalls, match=exactly("the model was called more than 2 times")):
        whole.complete("", [lab.user("c")], [])
    streaming = lab.capped(lab.StreamingModel([lab.forever("again")]), cap=1)
    assert [e["type"] for e in streaming.stream("", [lab.user("a")], [])][-1] == "end"
    with pytest.raises(lab.TooManyCalls):
        streaming.stream("", [lab.user("b")], [])


def test_drain_gives_the_events_and_the_error_that_ended_the_run():
    def run():
        yield {"type": "agent_start"}
        raise ValueError("boom")
    events, error = lab.drain(run())
    assert events == [{"type": "agent_start"}] and isinstance(error, ValueError)
    assert lab.drain(iter([1, 2])) == ([1, 2], None)


def test_labcase_call_fails_with_what_raised_and_the_hint():
    class Case(lab.LabCase):
        def runTest(self):
            pass
    case = Case()
    assert case.call("double", lambda x: 2 * x, 4) == 8

    def parse():
        raise ValueError("bad")
    with pytest.raises(AssertionError, match=r"^parse on 'x' raised ValueError: bad\. Catch it\.$"):
        case.call("parse on 'x'", parse, hint="Catch it.")
    with pytest.raises(AssertionError, match=r"^f raised KeyError: 'k'$"):
        case.call("f", {}.__getitem__, "k")


@pytest.mark.parametrize("args,said", [
    ((["U"], "hi", []), "ScriptedModel: model call 1: the system prompt (the first argument) must be "
                        "a string, as in complete(system, messages, tools); it got list ['U']"),
    (("sys", "hello", []), "ScriptedModel: model call 1: messages (the second argument) must be a "
                           "list of message dicts, as in complete(system, messages, tools); it got "
                           "str 'hello'"),
    (("sys", [], "read"), "ScriptedModel: model call 1: tools (the third argument) must be a list "
                          "of tool specs, as in complete(system, messages, tools); it got str "
                          "'read'"),
])
def test_a_request_in_the_wrong_shape_is_refused_in_a_sentence(args, said):
    model = lab.ScriptedModel(["fine"])
    with pytest.raises(TypeError) as caught:
        model.complete(*args)
    assert str(caught.value) == said
    assert model.calls == [] and model.remaining == 1     # nothing recorded, no step used


def test_a_streamed_or_windowed_request_is_checked_the_same_way():
    for model in (lab.StreamingModel(["fine"]), lab.WindowedModel(["fine"], window=1000)):
        with pytest.raises(TypeError, match=exactly(
                f"{type(model).__name__}: model call 1: the system prompt (the first argument) must be a "
                "string, as in complete(system, messages, tools); it got list [{'role': 'user', 'content': 'hi'}]")):
            model.complete([lab.user("hi")], "sys", [])
    with pytest.raises(TypeError, match=exactly(
            "StreamingModel: model call 1: messages (the second argument) must be a list of message dicts, "
            "as in complete(system, messages, tools); it got NoneType None")):
        next(lab.StreamingModel(["fine"]).stream("sys", None, []))


# -- timeline -----------------------------------------------------------------------------------


def _harness(lesson: int):
    """The reference harness of `lesson`, as a module (the one a cell of that lesson imports)."""
    import types

    import stages
    module = types.ModuleType(f"harness_{lesson}")
    exec(compile(stages.load().reference(lesson), f"harness_{lesson}.py", "exec"), module.__dict__)
    return module


def _steps(text: str, width: int) -> list[dict]:
    """A printed timeline cut into its steps: each one's record and view columns (as lists of
    (mark, cell)) and its reply line, read back from the fixed columns."""
    lines = text.split("\n")
    assert lines[-1] == "\u2500\u2500 end of timeline"
    steps: list[dict] = []
    rows = None
    for line in lines[2:-1]:
        if line.startswith(("\u2500\u2500 call ", "\u2500\u2500 step ")):
            steps.append({"head": line, "record": [], "view": [], "rows": []})
        elif line.startswith("record"):
            assert line.index("   view") == width, line
            rows = steps[-1]
        elif line.startswith("reply: "):
            steps[-1]["reply"] = line[len("reply: "):]
            rows = None
        else:
            assert rows is not None, f"a row outside a step: {line!r}"
            left, mark, right = line[:width].rstrip(), line[width + 1:width + 2], line[width + 3:]
            assert line[width:width + 1] == " " and mark in "=+-~ ", line
            rows["rows"].append((left, mark, right))
            if left:
                rows["record"].append(left.split(" ")[0])
            if right:
                rows["view"].append(right.split(" ")[0])
    return steps


def _ctrl_c_session():
    """Lesson 10's session: Ctrl-C inside pytest, then two more prompts to a strict model."""
    harness = _harness(10)

    def ctrl_c(arguments):
        raise KeyboardInterrupt

    pytest_call = lab.call("bash", {"command": "pytest"}, id="c1")
    model = lab.ScriptedModel([lab.reply(lab.text("Running them."), pytest_call),
                               lab.say("Still here."), lab.say("Then I'll read the log.")],
                              check=True)
    bash = {**harness.make_bash_tool(lab.Shell(lab.Workspace())), "execute": ctrl_c}
    h = harness.Harness(model, harness.SYSTEM, [bash])
    try:
        lab.drive(h.prompt("Run the tests."))
    except KeyboardInterrupt:
        pass
    lab.drive(h.prompt("Are you still there?"))
    lab.drive(h.prompt("Don't run them again yet."))
    return h, model


def test_timeline_each_step_is_what_the_model_was_sent():
    h, model = _ctrl_c_session()
    record = list(h.messages)
    text = lab.timeline(h.messages, model.calls)
    steps = _steps(text, 36)
    assert len(steps) == len(model.calls) == 3
    assert text.startswith("Timeline of 3 model calls; the record now: U A[c1] U A U A\n")
    for k, (step, request) in enumerate(zip(steps, model.calls), 1):
        assert step["head"].startswith(f"\u2500\u2500 call {k} of 3: ")
        # The view column is exactly the list the model was sent, message for message.
        assert " ".join(step["view"]) == lab.shape(request.messages)
        # The record column is the record as it stood: everything before this call's reply.
        before = record[:next(i for i, m in enumerate(record) if m is request.reply)]
        assert " ".join(step["record"]) == lab.shape(before)
        assert f"held {len(before)} message" in step["head"]
        assert step["reply"].startswith(lab.shape([request.reply]) + " ")
    # The stand-in for c1 is in the view of calls 2 and 3, marked, and never in the record.
    for step in steps[1:]:
        made_up = [row for row in step["rows"] if row[1] == "+"]
        assert made_up == [("", "+", made_up[0][2])] and made_up[0][2].startswith("R(c1)  [is_error] ")
        assert "R(c1)" not in step["record"]
        assert all(mark == "=" for _, mark, _ in step["rows"] if mark != "+")
    assert not any(row[1] == "+" for row in steps[0]["rows"])
    assert text == lab.timeline(h.messages, model, 36), "the same run, the same text; a model is taken for its calls"


def test_timeline_marks_every_repair():
    """A view that moves, drops and makes up results: each row says which."""
    harness = _harness(10)
    a, b, c, z = (lab.call("read", {"path": p}, id=p) for p in ("a", "b", "c", "z"))
    record = [lab.user("Check them."), lab.tool_result(z, "orphan"), lab.reply(a, b),
              lab.tool_result(b, "B"), lab.tool_result(a, "A"), lab.tool_result(b, "B again"),
              lab.reply(c), lab.user("Well?")]
    model = lab.ScriptedModel([lab.say("Done.")], check=True)
    record.append(model.complete("s", harness.context_for_model(record), []))
    [step] = _steps(lab.timeline(record, model.calls, width=30), 30)
    marks = [(left.split(" ")[0], mark, right.split(" ")[0]) for left, mark, right in step["rows"]]
    assert marks == [("U", "=", "U"), ("R(z)", "-", ""), ("A[a,b]", "=", "A[a,b]"),
                     ("R(b)", "~", ""), ("R(a)", "=", "R(a)"), ("", "~", "R(b)"),
                     ("R(b)", "-", ""), ("A[c]", "=", "A[c]"), ("", "+", "R(c)"), ("U", "=", "U")]
    assert step["reply"] == 'A "Done."'


def test_timeline_keeps_to_its_width():
    h, model = _ctrl_c_session()
    for width in (20, 36, 50):
        text = lab.timeline(h.messages, model.calls, width=width)
        for line in text.split("\n")[2:]:
            assert len(line) <= 2 * width + 3, (width, line)
        assert len(_steps(text, width)) == 3
        assert "\u2026" in text if width < 50 else True


def test_timeline_a_call_that_never_answered():
    """A power cut during call 2: no reply, and the record as it stood is what was sent."""
    harness = _harness(10)
    pytest_call = lab.call("bash", {"command": "pytest"}, id="c1")
    model = lab.ScriptedModel([lab.reply(pytest_call), lab.power_cut()])
    h = harness.Harness(model, harness.SYSTEM, [harness.make_bash_tool(lab.Shell(lab.Workspace()))])
    with pytest.raises(lab.PowerCut):
        lab.drive(h.prompt("Run the tests."))
    steps = _steps(lab.timeline(h.messages, model.calls), 36)
    assert steps[1]["reply"] == "none: the call raised before it answered"
    assert steps[1]["record"] == steps[1]["view"] == ["U", "A[c1]", "R(c1)"]
    assert model.calls[1].reply is None and model.calls[0].reply is h.messages[1]


def test_timeline_says_what_is_wrong():
    with pytest.raises(ValueError, match=exactly("timeline: width=10 must be a whole number of characters, 20 or more")):
        lab.timeline([], [], width=10)
    with pytest.raises(TypeError, match=exactly("timeline: calls[0] is not a model call (a Request, from model.calls) but dict")):
        lab.timeline([], [lab.user("hi")])
    empty = lab.ScriptedModel(["Hm?"])
    empty.complete("s", [], [])
    [step] = _steps(lab.timeline([], empty), 36)
    assert step["rows"] == [("(nothing)", " ", "(nothing)")] and step["reply"] == 'A "Hm?"'
    assert lab.timeline([], []) == ("Timeline of 0 model calls; the record now: (empty)\n"
                                    "= as recorded  + only in the view  - not sent  ~ moved\n"
                                    "\u2500\u2500 end of timeline")


def test_timeline_of_a_slice_names_each_call():
    """model.calls[-2:] is told as steps, each naming its model call; a log read back from its
    file (equal copies, not the same dicts) still finds where each reply sits."""
    import copy
    model = lab.ScriptedModel([lab.forever(lab.say("Noted."))])
    record = []
    for text in ("one", "two", "three"):
        record.append(lab.user(text))
        record.append(model.complete("s", list(record), []))
    from_file = copy.deepcopy(record)
    text = lab.timeline(from_file, model.calls[-2:])
    heads = [line for line in text.split("\n") if line.startswith("\u2500\u2500 ")]
    assert heads[0].startswith("\u2500\u2500 step 1 of 2: model call 2, the record held 3 messages, the view 3 ")
    assert heads[1].startswith("\u2500\u2500 step 2 of 2: model call 3, the record held 5 messages, the view 5 ")
    assert "view, what call 3 was sent" in text
    steps = _steps(text, 36)
    assert [s["record"] for s in steps] == [["U", "A", "U"], ["U", "A", "U", "A", "U"]]
    assert all(mark == "=" for s in steps for _, mark, _ in s["rows"])
