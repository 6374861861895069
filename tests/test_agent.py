"""agent.py end to end, under CPython, against a provider on 127.0.0.1 (tests/wire_server.py).

The closing page's download folder holds agent.py; with the reference harness of the closing page
as harness.py it must finish a multi-step task in each wire format (read a file, write a fix, run
a command), ask before the write and the command, keep the key out of the log, answer a "no" to
the model as a result it can read, and survive a kill mid-task: the log it leaves replays, and
--resume carries the session on to the end."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import lab
import stages
from wire_server import WireServer

ROOT = Path(__file__).resolve().parent.parent
AGENT = ROOT / "lessons" / "16-take-it-home" / "download" / "agent.py"
KEY = "sk-local-test-5f3a-NEVER-LOGGED"
BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('OK')\n"
TASK = "fix the failing test"


def _job(turn, request):
    """The provider's side of the task: read, write the fix, run the test, say so."""
    steps = [lab.reply("Reading the code.", lab.call("read", {"path": "calc.py"}, id="r1")),
             lab.reply(lab.call("write", {"path": "calc.py", "content": FIXED}, id="w1")),
             lab.reply(lab.call("bash", {"command": f"{sys.executable} test_calc.py"}, id="b1")),
             lab.say("Fixed: add() adds, and the test passes.")]
    return steps[turn]


def _stopper(turn, request):
    """Read, try to write, and stop once told no."""
    steps = [lab.reply(lab.call("read", {"path": "calc.py"}, id="r1")),
             lab.reply(lab.call("write", {"path": "calc.py", "content": FIXED}, id="w1")),
             lab.say("Understood: I changed nothing.")]
    return steps[turn]


@pytest.fixture(scope="module")
def reference():
    return stages.load().reference(16)


@pytest.fixture
def home(tmp_path, reference):
    """A reader's folder: their harness, agent.py, and a project with a failing test."""
    (tmp_path / "harness.py").write_text(reference, encoding="utf-8")
    shutil.copy(AGENT, tmp_path / "agent.py")
    project = tmp_path / "project"
    project.mkdir()
    (project / "calc.py").write_text(BUGGY, encoding="utf-8")
    (project / "test_calc.py").write_text(TEST, encoding="utf-8")
    return tmp_path


def _command(provider, server, *extra):
    return [sys.executable, "agent.py", "--provider", provider, "--base-url", server.base_url,
            "--model", "local-model", "--folder", "project", *extra]


def _env(provider):
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env["ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"] = KEY
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(home, provider, server, *extra, answers=""):
    return subprocess.run(_command(provider, server, *extra), cwd=home, env=_env(provider),
                          input=answers, capture_output=True, text=True, timeout=60)


def _log(home):
    path = home / "project" / ".agent" / "session.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _messages(home):
    return [entry["message"] for entry in _log(home) if entry["type"] == "message"]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_task_end_to_end(home, provider):
    with WireServer(_job) as server:
        done = _run(home, provider, server, TASK, answers="y\ny\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (home / "project" / "calc.py").read_text() == FIXED
    assert lab.shape(_messages(home)) == "U A[r1] R(r1) A[w1] R(w1) A[b1] R(b1) A"
    bash_result = _messages(home)[6]
    assert bash_result["content"].strip() == "OK" and not bash_result["is_error"]
    # asked before the write and the command, never before the read
    assert "? write" in done.stderr and "? bash" in done.stderr and "? read" not in done.stderr
    assert "Fixed: add() adds" in done.stdout
    # the key went in the header and nowhere else
    paths, headers, bodies = zip(*server.requests)
    assert len(paths) == 4
    if provider == "anthropic":
        assert set(paths) == {"/v1/messages"}
        assert all(h.get("x-api-key") == KEY for h in headers)
        assert all(b["system"] and all(m["role"] != "system" for m in b["messages"])
                   for b in bodies)
    else:
        assert set(paths) == {"/v1/chat/completions"}
        assert all(h.get("authorization") == f"Bearer {KEY}" for h in headers)
        assert all(b["messages"][0]["role"] == "system" for b in bodies)
    log_text = (home / "project" / ".agent" / "session.jsonl").read_text()
    assert KEY not in log_text and KEY not in done.stdout and KEY not in done.stderr


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_no_is_a_result_the_model_reads(home, provider):
    with WireServer(_stopper) as server:
        done = _run(home, provider, server, TASK, answers="n\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (home / "project" / "calc.py").read_text() == BUGGY
    denial = _messages(home)[4]
    assert denial["is_error"] and "said no" in denial["content"]
    last_request = server.requests[-1][2]["messages"]
    if provider == "anthropic":
        result = last_request[-1]["content"][-1]
        assert result["type"] == "tool_result" and result["is_error"] is True
        assert "said no" in result["content"]
    else:
        assert last_request[-1]["role"] == "tool"
        assert last_request[-1]["content"].startswith("Error: The user said no")


def test_tools_stay_in_the_folder(home):
    def escape(turn, request):
        steps = [lab.reply(lab.call("read", {"path": "../harness.py"}, id="r1")),
                 lab.reply(lab.call("write", {"path": "/tmp/outside.txt", "content": "x"},
                                    id="w1")),
                 lab.say("I stay where I am.")]
        return steps[turn]
    with WireServer(escape) as server:
        done = _run(home, "openai", server, "look around", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    read, write = _messages(home)[2], _messages(home)[4]
    assert read["is_error"] and "outside the folder" in read["content"]
    assert write["is_error"] and "outside the folder" in write["content"]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_killed_mid_task_then_resumed(home, provider):
    with WireServer(_job) as server:
        server.hold(2)                         # the request after the write's result
        agent = subprocess.Popen(_command(provider, server, TASK), cwd=home,
                                 env=_env(provider), stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        agent.stdin.write("y\n")
        agent.stdin.flush()
        assert server.holding.wait(30), "agent.py never reached the third request"
        agent.send_signal(signal.SIGKILL)
        agent.communicate(timeout=30)
        server.release()
        assert agent.returncode == -signal.SIGKILL
        # the kill left a log that replays: the write is in it, and on the disk
        assert lab.shape(_messages(home)) == "U A[r1] R(r1) A[w1] R(w1)"
        assert (home / "project" / "calc.py").read_text() == FIXED
        # without --resume, a second start refuses to mix two sessions in one log
        again = _run(home, provider, server, TASK)
        assert again.returncode != 0 and "--resume" in again.stderr
        resumed = _run(home, provider, server, "--resume", answers="y\n")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert lab.shape(_messages(home)) == "U A[r1] R(r1) A[w1] R(w1) A[b1] R(b1) A"
    first_after = server.requests[-2][2]["messages"]
    words = json.dumps(first_after)
    assert "r1" in words and "w1" in words, "the resumed request did not carry the session"
    assert "? bash" in resumed.stderr


def test_a_missing_key_is_said_before_anything_is_sent(home):
    env = _env("anthropic")
    del env["ANTHROPIC_API_KEY"]
    done = subprocess.run([sys.executable, "agent.py", "--folder", "project", TASK], cwd=home,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "ANTHROPIC_API_KEY" in done.stderr
    assert not (home / "project" / ".agent" / "session.jsonl").exists()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_both_ways_over_a_real_socket(tmp_path, reference, provider):
    """The reference adapters over urllib: complete() and stream() read the local provider's
    JSON and its server-sent events from a real socket, and a refused port is a failed reply."""
    (tmp_path / "harness_16.py").write_text(reference, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        import harness_16 as harness
    finally:
        sys.path.remove(str(tmp_path))
    make = harness.AnthropicModel if provider == "anthropic" else harness.OpenAIModel
    with WireServer(_job) as server:
        model = make("local-model", base_url=server.base_url, environ={})
        asked = [lab.user(TASK)]
        reply = model.complete("Be brief.", asked, [])
        assert lab.shape([reply]) == "A[r1]" and reply["content"][0]["text"] == "Reading the code."
        events = list(model.stream("Be brief.", asked, []))
    assert [e["type"] for e in events] == ["text", "call", "arguments", "end"]
    assert json.loads(events[2]["json"]) == {"path": "calc.py"}
    assert events[-1]["stop_reason"] == "toolUse"
    closed = make("local-model", base_url=server.base_url, environ={}, retries=1,
                  sleep=lambda seconds: None)
    failed = closed.complete("Be brief.", asked, [])
    assert failed["stop_reason"] == "error"
    assert failed["error_message"].startswith("connection failed")


def test_ask_first_keeps_an_async_tool_async(tmp_path, reference):
    """An async tool (lesson 15) wrapped by ask_first is still awaited and handed the run's
    token: the question comes first, a no is a failed result, and a yes runs the tool."""
    import importlib.util
    path = tmp_path / "harness.py"
    path.write_text(reference, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("harness_under_test", path)
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    seen = []

    async def slow(arguments, signal=None):
        seen.append(signal)
        return f"slept on {arguments['what']}"

    answers = iter([False, True])
    tools = harness.ask_first([{"name": "nap", "description": "Sleep.", "parameters": {},
                                "execute": slow}], lambda name, arguments: next(answers))
    token = harness.CancelToken()
    call = lab.call("nap", {"what": "it"}, id="n1")
    refused = lab.run(harness.run_tool(tools, call, token))
    done = lab.run(harness.run_tool(tools, call, token))
    assert refused["is_error"] and "said no" in refused["content"], refused
    assert done == {**done, "content": "slept on it", "is_error": False}, done
    assert seen == [token]
