"""lab/window.py, lesson 12's props: a model with a context window, and a summariser that goes
only by what it is sent. Lesson 12's outputs and lab tests are only as true as these."""

from __future__ import annotations

import re

import pytest

import lab


def exactly(sentence: str) -> str:
    """A pattern for pytest.raises(match=) that takes the whole sentence, not a fragment of it."""
    return "^" + re.escape(sentence) + "$"


def _request(messages, tools=()):
    return lab.Request("You are a helpful assistant.", list(messages), list(tools), 1)


def test_a_request_over_the_window_is_refused_in_words_and_uses_no_step():
    model = lab.WindowedModel(["first", "second"], window=60)
    big = [lab.user("x" * 400)]
    used = lab.request_tokens(_request(big))
    refused = model.complete("You are a helpful assistant.", big, [])
    assert refused["stop_reason"] == "error" and refused["content"] == []
    assert refused["error_message"] == f"400 prompt is too long: {used} tokens > 60 maximum"
    assert len(model.calls) == 1 and model.remaining == 2      # recorded, and no step used
    answer = model.complete("You are a helpful assistant.", [lab.user("Hi")], [])
    assert lab.shape([answer]) == "A" and answer["content"][0]["text"] == "first"


def test_request_tokens_is_the_count_a_reply_reports():
    model = lab.WindowedModel([lab.forever("ok")], window=10_000)
    messages = [lab.user("Which port?"), lab.say("9090."), lab.user("Sure?")]
    reply = model.complete("You are a helpful assistant.", messages, [])
    assert reply["usage"]["input"] == lab.request_tokens(model.calls[0])


def test_window_must_be_a_whole_number():
    with pytest.raises(ValueError, match=exactly("WindowedModel: window=0 must be a whole number of tokens, 1 or more")):
        lab.WindowedModel([], window=0)


def _job():
    ls = lab.call("bash", {"command": "ls"}, id="c1")
    write = lab.call("write", {"path": "a.py", "content": "A = 1\n"}, id="c2")
    return [lab.user("Rename PORT in a.py. Never touch tests/."), lab.reply(ls),
            lab.tool_result(ls, "a.py\nb.py\n"),
            lab.reply(lab.text("Decision: rename in place."), write),
            lab.tool_result(write, "Successfully wrote to a.py."), lab.user("Now b.py.")]


def test_the_summary_has_five_sections_read_from_the_request():
    step = lab.summariser()
    text = step(_request(_job() + [lab.user("Summarise the conversation above.")]))
    words = text["content"][0]["text"]
    assert [line for line in words.splitlines() if line.startswith("## ")] == [
        "## Goal", "## Constraints", "## Progress", "## Decisions", "## Next steps"]
    assert "Rename PORT in a.py. Never touch tests/." in words
    assert "- Never touch tests/." in words
    assert '- [x] write {"path": "a.py", "content": "A = 1\\n"}: Successfully wrote to a.py.' in words
    assert "- Decision: rename in place." in words and "- Now b.py." in words


def test_a_bad_cut_reads_badly():
    """Sent a conversation that starts with a result, the summary says what it could not know."""
    words = lab.summariser()(_request(_job()[2:] + [lab.user("Summarise.")]))["content"][0]["text"]
    assert "(unknown: the conversation I was sent starts with a toolResult message" in words
    assert "- [?] a bash result for c1, whose call I was not sent" in words


def test_an_earlier_summary_is_carried_forward():
    first = lab.summariser()(_request(_job() + [lab.user("Summarise.")]))["content"][0]["text"]
    again = [lab.user(lab.SUMMARY_PREFIX + first), lab.user("Now c.py."), lab.user("Summarise.")]
    words = lab.summariser()(_request(again))["content"][0]["text"]
    assert "Rename PORT in a.py. Never touch tests/." in words
    assert '[x] write {"path": "a.py"' in words and "- Now c.py." in words


def test_offered_tools_it_carries_on_instead():
    spec = {"name": "read", "description": "Read a file.", "parameters": {}}
    alone = lab.summariser()(_request(_job(), [spec]))
    assert lab.shape([alone]) == "A[s1]" and not any(b["type"] == "text" for b in alone["content"])
    worker = lab.summariser(otherwise=lambda request: lab.say("working"))
    assert worker(_request(_job(), [spec]))["content"][0]["text"] == "working"


def test_rename_session_is_the_long_session_of_lesson_12s_second_cell(tmp_path):
    """lab.rename_session(harness, n) gives the record and the tools lesson 12's second cell's
    long_session(n) gives, with the book's lesson 12 harness: the cells after it call it instead."""
    import importlib.util
    import stages
    (tmp_path / "harness.py").write_text(stages.load().solution("12.2"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("harness_12_2", tmp_path / "harness.py")
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)

    def long_session(prompts):          # the cell's, word for word
        ws = lab.Workspace(lab.RENAME_FILES)
        tools = [harness.make_bash_tool(lab.Shell(ws)),
                 harness.make_read_tool(ws), harness.make_write_tool(ws)]
        h = harness.Harness(lab.ScriptedModel([lab.forever(lab.renamer)]),
                            harness.SYSTEM, tools)
        for text in [lab.RENAME_TASK] + ["Next."] * (prompts - 1):
            lab.drive(h.prompt(text))
        return list(h.messages), tools

    for prompts in (1, 5):
        messages, tools = lab.rename_session(harness, prompts)
        want, want_tools = long_session(prompts)
        assert messages == want
        assert [t.name if hasattr(t, "name") else t["name"] for t in tools] == \
            [t.name if hasattr(t, "name") else t["name"] for t in want_tools]
    assert lab.shape(lab.rename_session(harness, 5)[0]).count("U") == 5
