"""lab/stream.py, lesson 14's props: a model that streams, its faults, and the bytes of a stream.
Lesson 14's outputs and lab tests are only as true as these."""

from __future__ import annotations

import json
import re

import pytest

import lab


def exactly(sentence: str) -> str:
    """A pattern for pytest.raises(match=) that takes the whole sentence, not a fragment of it."""
    return "^" + re.escape(sentence) + "$"

CALL = lab.call("read", {"path": "config.py", "note": "caf\u00e9"}, id="c1")


def _events(model, messages=(lab.user("Hi"),)):
    return list(model.stream("S", list(messages), []))


def test_pieces_cut_text_by_words_and_arguments_by_a_fixed_width():
    reply = dict(lab.reply("Port 9090 is free.", CALL), usage={"input": 1, "output": 2})
    events = lab.pieces(reply)
    assert [e["text"] for e in events if e["type"] == "text"] == ["Port ", "9090 ", "is ", "free."]
    assert events[4] == {"type": "call", "index": 0, "id": "c1", "name": "read"}
    parts = [e["json"] for e in events if e["type"] == "arguments"]
    assert all(len(p) <= lab.ARGUMENT_PIECE for p in parts)
    assert json.loads("".join(parts)) == CALL["arguments"]
    assert any(not _parses(p) for p in parts)          # a piece of JSON is not JSON
    assert events[-1] == {"type": "end", "stop_reason": "toolUse", "usage": {"input": 1, "output": 2}}
    assert lab.pieces(lab.provider_error("503 overloaded")) == [
        {"type": "error", "message": "503 overloaded"}]


def _parses(text):
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def test_a_stream_sends_what_complete_sends_and_records_each_request():
    steps = [lab.reply("Let me look.", CALL), "Port 9090."]
    streamed, whole = lab.StreamingModel(steps), lab.StreamingModel(steps)
    for n in range(2):
        events = _events(streamed)
        reply = whole.complete("S", [lab.user("Hi")], [])
        assert events == lab.pieces(reply)
    assert len(streamed.calls) == 2 and streamed.remaining == 0
    assert streamed.calls[0].messages == [lab.user("Hi")]


def test_the_request_is_made_at_the_first_read():
    model = lab.StreamingModel([lab.raises(ConnectionError("refused"))])
    stream = model.stream("S", [lab.user("Hi")], [])
    assert model.calls == []
    with pytest.raises(ConnectionError):
        next(stream)
    assert len(model.calls) == 1


def test_faults_break_a_stream_the_ways_a_network_and_a_provider_do():
    ok = lab.say("one two three four")
    model = lab.StreamingModel([lab.drop(ok, after=2), lab.no_end(ok), lab.no_end(ok, after=1),
                                lab.error_event(ok, after=3)])
    stream = model.stream("S", [], [])
    got = [next(stream), next(stream)]
    with pytest.raises(ConnectionError, match=exactly("connection reset by peer")):
        next(stream)
    assert [e["text"] for e in got] == ["one ", "two "]
    assert _events(model) == lab.pieces(ok)[:-1]
    assert _events(model) == lab.pieces(ok)[:1]
    assert _events(model) == lab.pieces(ok)[:3] + [{"type": "error", "message": lab.OVERLOADED}]


def test_fault_steps_wrap_functions_and_forever_and_complete_fails_too():
    model = lab.StreamingModel([lab.forever(lab.drop(lambda request: lab.say("Hi there"), 1))])
    assert [e["text"] for e in _events_until_error(model)] == ["Hi "]
    assert [e["text"] for e in _events_until_error(model)] == ["Hi "]
    with pytest.raises(ConnectionError):
        model.complete("S", [], [])
    failed = lab.StreamingModel([lab.error_event("Hi", 0)]).complete("S", [], [])
    assert failed["stop_reason"] == "error" and failed["error_message"] == lab.OVERLOADED


def _events_until_error(model):
    events = []
    try:
        for event in model.stream("S", [], []):
            events.append(event)
    except ConnectionError:
        pass
    return events


def test_check_refuses_an_invalid_transcript_and_uses_no_step():
    model = lab.StreamingModel(["ok"], check=True)
    events = _events(model, [lab.say("I speak first.")])
    assert events[0]["type"] == "error" and events[0]["message"].startswith("400 invalid")
    assert model.remaining == 1


def test_a_short_script_says_so():
    model = lab.StreamingModel([])
    with pytest.raises(lab.ScriptExhausted, match=exactly(
            "StreamingModel: model call 1 has no step: the script has 0 steps, so none to use. Add steps, "
            "or end the script with lab.forever(...).")):
        _events(model)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_fault_counts_are_whole_numbers(bad):
    with pytest.raises(ValueError, match=exactly(f"lab.drop: after={bad!r} must be a whole number of pieces, 0 or more")):
        lab.drop("Hi", bad)


def test_sse_writes_events_comments_and_line_endings():
    data = lab.sse([{"event": "ping", "data": "a\nb"}, "keep-alive", {"data": "caf\u00e9"}])
    assert data == "event: ping\ndata: a\ndata: b\n\n: keep-alive\ndata: caf\u00e9\n\n".encode()
    assert lab.sse([{"data": "x"}], newline="\r\n") == b"data: x\r\n\r\n"
    with pytest.raises(ValueError):
        lab.sse([], newline="\n\n")


def test_chunks_cut_at_offsets_inside_characters_too():
    data = "caf\u00e9".encode()
    assert lab.chunks(data, [4]) == [b"caf\xc3", b"\xa9"]
    assert lab.chunks(data, [0, 5, 2, 2]) == [b"ca", b"f\xc3\xa9"]
    assert lab.chunks(data, "every byte") == [bytes([b]) for b in data]
    assert b"".join(lab.chunks(data, [1, 3])) == data
    with pytest.raises(ValueError, match=exactly("lab.chunks: offset 9 is outside 0..5")):
        lab.chunks(data, [9])
    with pytest.raises(ValueError):
        lab.chunks(data, "every line")


def test_pace_waits_before_each_event_and_changes_nothing_sent():
    import time
    paced = lab.StreamingModel(["one two three"], pace=0.02)
    start = time.perf_counter()
    events = _events(paced)
    assert time.perf_counter() - start >= 0.02 * len(events)
    assert events == _events(lab.StreamingModel(["one two three"]))
    with pytest.raises(ValueError, match=exactly("StreamingModel: pace=5 must be seconds, from 0 to 1")):
        lab.StreamingModel([], pace=5)
