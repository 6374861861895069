"""agent.py end to end, under CPython, against a provider on 127.0.0.1 (tests/wire_server.py).

The closing page's download folder holds agent.py; with the reference harness of the closing page
as harness.py it must finish a multi-step task in each wire format (read a file, write a fix, run
a command), ask before the write and the command, keep the key out of the log, answer a "no" to
the model as a result it can read, and survive a kill mid-task: the log it leaves replays, and
--resume carries the session on to the end.

Then what a real key and a real terminal need (issue 37): no command sees a provider key; the
y/N question shows the whole command, escaped, and so does the screen; a command cannot break
the log, and a broken log gets a sentence and --repair-log; the first Ctrl-C stops at once
(provider wait, question, command), records INTERRUPTED and sends nothing more; a command is
stopped with everything it started and its output is capped as it is read; bad input and an
unfinished harness get a sentence before anything is written or sent."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
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
        assert again.returncode != 0
        assert again.stderr == (f"agent.py: a session is already in {home / 'project' / '.agent' / 'session.jsonl'}: "
                                "add --resume to carry on with it, or delete the file to start afresh\n")
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
    assert done.returncode != 0
    assert done.stderr == "agent.py: set ANTHROPIC_API_KEY (or give --base-url for a local server)\n"
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


# -- safe with a real key and a real terminal ----------------------------------------------------

class _Agent:
    """agent.py started in the background, its stdout and stderr collected as they come."""

    def __init__(self, home, provider, server, *extra, env=None):
        self.process = subprocess.Popen(
            _command(provider, server, *extra), cwd=home, env=env or _env(provider),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out, self.err = bytearray(), bytearray()
        self._readers = [threading.Thread(target=self._collect, args=(pipe, into), daemon=True)
                         for pipe, into in ((self.process.stdout, self.out),
                                            (self.process.stderr, self.err))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _collect(pipe, into):
        while chunk := os.read(pipe.fileno(), 4096):
            into += chunk

    def interrupt(self):
        """One Ctrl-C; returns the seconds agent.py took to exit after it."""
        sent = time.monotonic()
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)
        for reader in self._readers:
            reader.join(5)
        return time.monotonic() - sent

    @property
    def stderr(self):
        return self.err.decode("utf-8", "replace")


# "At once", for a Ctrl-C: well before the 30 s the command sleeps or the provider holds, with room
# for a machine busy enough that starting and reaping a process takes seconds (a run beside four
# helpers and the browser suite failed at 5).
AT_ONCE = 15


def _until(condition, seconds=30):
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.05)


def _entries(home):
    """Every line of the log read as JSON: a line that is not would fail here."""
    return _log(home)


def _one_command(command):
    def job(turn, request):
        return [lab.reply(lab.call("bash", {"command": command}, id="b1")),
                lab.say("Done.")][min(turn, 1)]
    return job


def _gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_no_command_sees_a_provider_key(home, provider):
    """`env` answered y: no key in its output, the log, the screen or the next request, whatever
    variable held it."""
    env = _env(provider)
    env["OTHER_API_KEY"] = "sk-other-9c1d"
    env["MY_COPY_OF_THE_KEY"] = KEY
    with WireServer(_one_command("env")) as server:
        done = subprocess.run(_command(provider, server, "show the environment"), cwd=home,
                              env=env, input="y\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    result = _messages(home)[2]["content"]
    assert "PATH=" in result, result                     # env ran
    seen = (result + done.stdout + done.stderr + json.dumps([b for _, _, b in server.requests])
            + (home / "project" / ".agent" / "session.jsonl").read_text())
    assert KEY not in seen and "sk-other-9c1d" not in seen
    assert "_API_KEY=" not in result


def test_the_question_shows_the_whole_command_escaped(home):
    """A command longer than any cut is shown to its last character before the y/N, and control
    characters and a right-to-left override are shown escaped, never raw."""
    long = "echo " + "a" * 420 + " ; echo HIDDEN-TAIL > tail.txt"
    tricky = "echo safe \x1b[2K\r\u202eharmless"
    def job(turn, request):
        return [lab.reply(lab.call("bash", {"command": long}, id="b1")),
                lab.reply(lab.call("bash", {"command": tricky}, id="b2")),
                lab.say("Done.")][turn]
    with WireServer(job) as server:
        done = _run(home, "anthropic", server, "go", answers="y\nn\n")
    assert done.returncode == 0, done.stdout + done.stderr
    asked = done.stderr[done.stderr.index("? bash"):]
    assert "HIDDEN-TAIL > tail.txt" in asked.split("allow it?")[0]
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr and "\r" not in done.stderr
    assert "echo safe \\x1b[2K\\r\\u202eharmless" in done.stderr


def test_model_text_and_tool_output_are_escaped_on_screen(home):
    """An escape sequence in the model's words or in a file it reads reaches the screen as text."""
    (home / "project" / "notes.txt").write_text("\x1b[2K\r? read allowed (--yes)\n")
    def job(turn, request):
        return [lab.reply("Look: \x1b[31mred\x1b[0m", lab.call("read", {"path": "notes.txt"},
                                                                 id="r1")),
                lab.say("Bye \x1b]0;title\x07")][turn]
    with WireServer(job) as server:
        done = _run(home, "openai", server, "go")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\r" not in done.stdout
    assert "Look: \\x1b[31mred" in done.stdout and "   \\x1b[2K" in done.stdout


def test_a_command_cannot_break_the_log(home):
    """A command that writes into .agent/ (answered y) finds it put back, says so in its result,
    and the session goes on with a log that replays."""
    command = "echo PWNED >> .agent/session.jsonl; rm .agent/.gitignore; echo done"
    with WireServer(_one_command(command)) as server:
        done = _run(home, "anthropic", server, "go", answers="y\n")
        assert done.returncode == 0, done.stdout + done.stderr
        assert lab.shape(_messages(home)) == "U A[b1] R(b1) A"
        assert "put back" in _messages(home)[2]["content"]
        assert (home / "project" / ".agent" / ".gitignore").read_text() == "*\n"
        again = _run(home, "anthropic", server, "--resume", "once more", answers="y\n")
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_torn_log_gets_a_sentence_and_a_way_out(home):
    """A log whose last line was cut short: a sentence naming the line and --repair-log, nothing
    sent; --repair-log keeps the whole lines and the old file; then --resume carries on."""
    with WireServer(_stopper) as server:
        assert _run(home, "anthropic", server, TASK, answers="n\n").returncode == 0
        path = home / "project" / ".agent" / "session.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:-1]) + lines[-1][:30])
        sent = len(server.requests)
        torn = _run(home, "anthropic", server, "--resume", "go on")
        assert torn.returncode != 0 and "Traceback" not in torn.stderr
        assert torn.stderr == (
            f"agent.py: {path}, line {len(lines)} of {len(lines)}, is not a whole log entry (a write cut "
            f"short, or an edit). Nothing was sent. python agent.py --folder {home / 'project'} --repair-log "
            f"keeps the {len(lines) - 1} whole lines before it and moves the old file aside; or move the "
            "file away to start afresh.\n")
        assert len(server.requests) == sent
        fixed = _run(home, "anthropic", server, "--repair-log")
        assert fixed.returncode == 0, fixed.stderr
        assert len(_entries(home)) == len(lines) - 1
        assert (path.parent / "session.jsonl.broken-1").exists()
        resumed = _run(home, "anthropic", server, "--resume", "go on", answers="n\n")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_ctrl_c_while_the_provider_holds_its_answer(home, provider):
    """The first Ctrl-C stops at once, mid-request; no request goes out after it; the log replays
    and the hint says how to resume."""
    with WireServer(_job) as server:
        server.hold(2)
        agent = _Agent(home, provider, server, TASK, "--yes")
        assert server.holding.wait(30)
        took = agent.interrupt()
        server.release()
        time.sleep(0.3)
        assert took < AT_ONCE, f"exited {took:.1f} s after Ctrl-C"
        assert agent.process.returncode == 130, agent.stderr
        assert len(server.requests) == 3
        assert lab.shape(_messages(home)) == "U A[r1] R(r1) A[w1] R(w1)"
        assert "--resume" in agent.stderr and "Traceback" not in agent.stderr
        resumed = _run(home, provider, server, "--resume", "--yes")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert lab.shape(_messages(home)) == "U A[r1] R(r1) A[w1] R(w1) A[b1] R(b1) A"


def test_ctrl_c_at_the_question(home):
    """The first Ctrl-C at the y/N question stops the run: the write gets INTERRUPTED in the log,
    nothing is written, and no request goes out after it."""
    with WireServer(_job) as server:
        agent = _Agent(home, "anthropic", server, TASK)
        _until(lambda: b"allow it?" in agent.err)
        took = agent.interrupt()
        assert took < AT_ONCE, f"exited {took:.1f} s after Ctrl-C"
        assert agent.process.returncode == 130, agent.stderr
        assert len(server.requests) == 2
    assert lab.shape(_messages(home)) == "U A[r1] R(r1) A[w1] R(w1)"
    cut = _messages(home)[4]
    assert cut["is_error"] and cut["content"].startswith("Tool call interrupted")
    assert (home / "project" / "calc.py").read_text() == BUGGY
    assert "--resume" in agent.stderr


def test_ctrl_c_while_a_command_runs(home):
    """The first Ctrl-C kills the command and all it started, records INTERRUPTED (not an exit
    code), and sends nothing more."""
    command = "echo $$ > pid.txt; sleep 30; echo ran > ran.txt"
    with WireServer(_one_command(command)) as server:
        agent = _Agent(home, "openai", server, "go", "--yes")
        pid_file = home / "project" / "pid.txt"
        _until(lambda: pid_file.exists() and pid_file.read_text().strip())
        took = agent.interrupt()
        time.sleep(0.3)
        assert took < AT_ONCE, f"exited {took:.1f} s after Ctrl-C"
        assert agent.process.returncode == 130, agent.stderr
        assert len(server.requests) == 1
    pid = int(pid_file.read_text())
    _until(lambda: _gone(pid), AT_ONCE)
    assert lab.shape(_messages(home)) == "U A[b1] R(b1)"
    assert _messages(home)[2]["content"].startswith("Tool call interrupted")
    assert not (home / "project" / "ran.txt").exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_kill_or_a_closed_terminal_stops_the_command_too(home, signum):
    """SIGTERM (kill PID) or SIGHUP (the terminal window closed) mid-command: stopped as a Ctrl-C
    is, the command and all it started with it, INTERRUPTED in the log, exit 128 + the signal."""
    command = "echo $$ > pid.txt; sleep 30; echo ran > ran.txt"
    with WireServer(_one_command(command)) as server:
        agent = _Agent(home, "anthropic", server, "go", "--yes")
        pid_file = home / "project" / "pid.txt"
        _until(lambda: pid_file.exists() and pid_file.read_text().strip())
        agent.process.send_signal(signum)
        agent.process.wait(timeout=30)
        assert agent.process.returncode == 128 + signum, agent.stderr
        assert len(server.requests) == 1
    pid = int(pid_file.read_text())
    try:
        _until(lambda: _gone(pid), AT_ONCE)
    finally:
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)
    assert lab.shape(_messages(home)) == "U A[b1] R(b1)"
    assert _messages(home)[2]["content"].startswith("Tool call interrupted")
    assert "--resume" in agent.stderr


def test_a_command_is_stopped_whole(home):
    """A time-out (--timeout) stops the command and what it started; a command that leaves a
    process in the background returns when it ends, and the process is stopped."""
    def job(turn, request):
        return [lab.reply(lab.call("bash", {"command": "(sleep 30; echo late > late.txt) & "
                                                       "echo $! > pid.txt; sleep 30"}, id="b1")),
                lab.reply(lab.call("bash", {"command": "sleep 31 & echo $! > bg.txt; echo up"},
                                   id="b2")),
                lab.say("Done.")][turn]
    began = time.monotonic()
    with WireServer(job) as server:
        done = _run(home, "anthropic", server, "go", "--yes", "--timeout", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - began < 15
    first, second = _messages(home)[2]["content"], _messages(home)[4]["content"]
    assert "timed out after 1 s" in first and "Command exited with code 124" in first
    assert second.startswith("up") and "background" in second
    for name in ("pid.txt", "bg.txt"):
        pid = int((home / "project" / name).read_text())
        _until(lambda: _gone(pid), AT_ONCE)


def _agent_module():
    spec = importlib.util.spec_from_file_location("agent_under_test", AGENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_output_is_capped_where_it_is_read(tmp_path):
    """200 MB printed: the shell keeps the last `keep` bytes as it reads, and says how much there
    was; memory does not grow with the output."""
    import resource
    agent = _agent_module()
    shell = agent.Shell(tmp_path, keep=100_000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    output, code = shell.run("head -c 200000000 /dev/zero | tr '\\0' 'x'; echo; echo last")
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert code == 0 and len(output) < 101_000
    assert "printed 200000006 bytes" in output and "last" in output
    assert grown_kb < 50_000, f"{grown_kb} kB more"


def test_a_signal_as_the_command_starts_still_stops_it(tmp_path, monkeypatch):
    """A Ctrl-C that lands the moment the command has started, before agent.py waits for it,
    still stops the command: it is held until the command is known, then raised where the
    command is stopped with it. (It once ran on for 30 s after a SIGHUP under load.)"""
    agent = _agent_module()
    started = []

    class SignalledAtStart(agent.subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)
            agent.INTERRUPTS.handler(signal.SIGINT, None)    # as the signal would, right here

    monkeypatch.setattr(agent.subprocess, "Popen", SignalledAtStart)
    with pytest.raises(KeyboardInterrupt):
        agent.Shell(tmp_path).run("sleep 30")
    (command,) = started
    try:
        assert command.wait(timeout=AT_ONCE) == -signal.SIGKILL, "the command was not stopped"
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()


def _refused(home, server, *extra, provider="anthropic"):
    """agent.py refused before it wrote or sent anything."""
    sent = len(server.requests)
    done = _run(home, provider, server, *extra)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert len(server.requests) == sent
    assert not (home / "project" / ".agent" / "session.jsonl").exists()
    return done


def test_a_harness_that_is_not_ready_gets_a_sentence(home):
    """harness.py missing, with a syntax error, or the download's starting file: a sentence."""
    harness_file = home / "harness.py"
    with WireServer(_job) as server:
        harness_file.unlink()
        assert _refused(home, server, TASK).stderr == (
            f"agent.py: there is no harness.py beside agent.py (in {home}). Put the harness.py you "
            "finished in lab 16.4 there.\n")
        harness_file.write_text("def broken(:\n    pass\n")
        assert _refused(home, server, TASK).stderr == (
            "agent.py: harness.py, line 1: invalid syntax. Fix it (the lab's tests show where) and start again.\n")
        for point, lacks in (("16.1", "ask_first, AnthropicModel, OpenAIModel"),
                             ("16.4", "HttpModel.complete, HttpModel.stream")):
            harness_file.write_text(stages.load().starting(point))
            assert _refused(home, server, TASK).stderr == (
                f"agent.py: harness.py has no {lacks}: it is not yet the closing page's harness. Finish "
                "lab 16.4 first (its tests all pass), and put that harness.py beside agent.py.\n")


def test_bad_flags_are_refused_before_anything_is_written(home):
    """A folder that does not exist or is a file, --max-turns 0 or less, --resume with no session:
    a sentence, and no session file, no folder, no request."""
    with WireServer(_job) as server:
        for extra, said in (
                (["--folder", "projetc"], "agent.py: --folder projetc: no such folder. Create it first; "
                                          "agent.py does not, so that a mistyped name is not a new, empty project.\n"),
                (["--folder", "project/calc.py"], "agent.py: --folder project/calc.py is a file, not a folder\n")):
            command = _command("anthropic", server, TASK)[:-3] + extra + [TASK]
            done = subprocess.run(command, cwd=home, env=_env("anthropic"), capture_output=True,
                                  text=True, timeout=60)
            assert (done.returncode, done.stderr) == (2, said)
            assert not (home / "projetc").exists()
        assert not server.requests
        for turns in ("0", "-1"):
            said = _refused(home, server, TASK, "--max-turns", turns).stderr
            assert said.startswith("usage: agent.py ") and said.endswith(
                f"\nagent.py: error: --max-turns must be 1 or more, not {turns}\n"), said
        assert _refused(home, server, "--resume").stderr == (
            f"agent.py: --resume: there is no session in {home / 'project' / '.agent' / 'session.jsonl'} "
            'to carry on. Start one with a prompt: python agent.py "..."\n')
        assert not (home / "project" / ".agent").exists()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_cut_stream_resumes_without_a_prefill(home, provider):
    """A stream cut after its first words: the run fails with a hint to resume; --resume sends a
    transcript that ends with a user's words (never the cut reply as a trailing assistant turn)."""
    def job(turn, request):
        return [lab.reply("Working on it.", lab.call("read", {"path": "calc.py"}, id="r1")),
                lab.say("Done.")][min(turn, 1)]
    with WireServer(job) as server:
        server.cut(0)
        failed = _run(home, provider, server, TASK)
        assert failed.returncode == 1 and "[failed:" in failed.stdout, failed.stdout
        assert "--resume" in failed.stderr
        resumed = _run(home, provider, server, "--resume")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        last = server.requests[-1][2]["messages"][-1]
        assert last["role"] == "user" and "cut off" in json.dumps(last)
        # a finished session is not sent again as it stands
        assert _refused_again(home, server, provider) == (
            f"agent.py: the session in {home / 'project' / '.agent' / 'session.jsonl'} ended with the "
            'model\'s answer. Say what to do next: python agent.py --resume "..."\n')


def test_resume_with_no_prompt_compacts_too(home):
    """--resume with no prompt on a log too long for --window: the session is compacted first,
    as a prompt's Session would do, and the request that follows no longer carries the old part."""
    big = "x" * 12_000
    r0, r1 = lab.call("read", {"path": "big.txt"}, id="r0"), lab.call("read", {"path": "calc.py"}, id="r1")
    messages = [lab.user(TASK), lab.reply(r0), lab.tool_result(r0, big), lab.say("Read it."),
                lab.user("Now calc.py."), lab.reply(r1), lab.tool_result(r1, BUGGY)]
    log = home / "project" / ".agent" / "session.jsonl"
    log.parent.mkdir()
    log.write_text("".join(json.dumps({"id": f"e{n}", "type": "message", "message": m}) + "\n"
                           for n, m in enumerate(messages, 1)), encoding="utf-8")

    def job(turn, request):
        if "tools" not in request:             # the summary: asked for with no tools on offer
            return lab.say("The user asked for a fix; big.txt was read.")
        return lab.say("Fixed.")
    with WireServer(job) as server:
        done = _run(home, "anthropic", server, "--resume", "--window", "3000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[compacted the session: threshold]" in done.stdout, done.stdout
    assert [entry["type"] for entry in _log(home)].count("compaction") == 1
    asked = server.requests[-1][2]
    assert "tools" in asked and big not in json.dumps(asked), "the old part was sent again"
    assert _messages(home)[-1]["content"] == [{"type": "text", "text": "Fixed."}]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_resume_with_no_prompt_compacts_after_a_refusal_for_length(home, provider):
    """--resume with no prompt, a log the estimate says fits (--window left at its default) but
    the provider refuses as too long: the refusal is a failed reply, the session is compacted
    once, and the same request is asked once more without the old part, and answered."""
    big, recent = "x" * 12_000, "# a comment\n" * 350          # old part ~3000 tokens, recent ~1000
    r0, r1 = lab.call("read", {"path": "big.txt"}, id="r0"), lab.call("read", {"path": "calc.py"}, id="r1")
    messages = [lab.user(TASK), lab.reply(r0), lab.tool_result(r0, big), lab.say("Read it."),
                lab.user("Now calc.py."), lab.reply(r1), lab.tool_result(r1, recent + BUGGY)]
    log = home / "project" / ".agent" / "session.jsonl"
    log.parent.mkdir()
    log.write_text("".join(json.dumps({"id": f"e{n}", "type": "message", "message": m}) + "\n"
                           for n, m in enumerate(messages, 1)), encoding="utf-8")

    def job(turn, request):
        if "tools" not in request:             # the summary: asked for with no tools on offer
            return lab.say("The user asked for a fix; big.txt was read.")
        return lab.say("Fixed.")
    with WireServer(job) as server:
        server.limit(17_000)                   # the whole session is over it; the summary is not
        done = _run(home, provider, server, "--resume")
    assert done.returncode == 0, done.stdout + done.stderr
    sizes = [len(json.dumps(body)) for _, _, body in server.requests]
    refused, summary, again = server.requests    # nothing before the refusal, nothing after
    assert "tools" in refused[2] and big in json.dumps(refused[2]), sizes
    assert "tools" not in summary[2] and big in json.dumps(summary[2]), sizes
    assert "tools" in again[2] and big not in json.dumps(again[2]), "the old part was sent again"
    assert "[compacted the session: overflow]" in done.stdout, done.stdout
    assert [entry["type"] for entry in _log(home)].count("compaction") == 1
    kept = _messages(home)
    words = kept[-2].get("error_message", "").lower()              # the refusal, kept as it came
    assert kept[-2]["stop_reason"] == "error" and ("prompt is too long" in words
                                                   or "maximum context" in words), kept[-2]
    assert kept[-1]["content"] == [{"type": "text", "text": "Fixed."}]


def _refused_again(home, server, provider):
    sent = len(server.requests)
    done = _run(home, provider, server, "--resume")
    assert done.returncode == 2 and len(server.requests) == sent, done.stderr
    return done.stderr


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_wrong_key_is_the_providers_401(home, provider):
    """A 401 in the body the provider sends: a failed reply with its words, a hint, the key in no
    output and no log."""
    with WireServer(_job) as server:
        server.require_key("sk-the-right-one-1234")
        done = _run(home, provider, server, TASK)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    expected = ("401 authentication_error: invalid x-api-key" if provider == "anthropic"
                else "401 invalid_request_error: Incorrect API key provided: sk-*****GGED")
    assert f"[failed: {expected}" in done.stdout, done.stdout
    assert "--resume" in done.stderr
    log_text = (home / "project" / ".agent" / "session.jsonl").read_text()
    assert KEY not in log_text + done.stdout + done.stderr


def test_the_small_things(home):
    """The system prompt names the real folder; a write puts a new file in the old one's place
    (its mode kept); .agent/ has a .gitignore of *; .AGENT is .agent to the tools."""
    calc = home / "project" / "calc.py"
    calc.chmod(0o755)
    inode = calc.stat().st_ino
    def job(turn, request):
        return [lab.reply(lab.call("write", {"path": "calc.py", "content": FIXED}, id="w1")),
                lab.reply(lab.call("read", {"path": ".AGENT/session.jsonl"}, id="r1")),
                lab.say("Done.")][turn]
    with WireServer(job) as server:
        done = _run(home, "anthropic", server, TASK, "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    system = server.requests[0][2]["system"]
    assert f"Working folder: {home / 'project'}" in system and "/workspace" not in system
    assert calc.read_text() == FIXED and calc.stat().st_ino != inode
    assert calc.stat().st_mode & 0o777 == 0o755
    assert not [p for p in calc.parent.iterdir() if p.name.endswith(".tmp")]
    assert (home / "project" / ".agent" / ".gitignore").read_text() == "*\n"
    refused = _messages(home)[4]
    assert refused["is_error"] and "agent's own record" in refused["content"]


def test_the_closing_pages_close_calls_is_agent_pys_own():
    """The closing page's Ctrl-C cell shows agent.py's close_calls "line for line": the two may
    differ only in the docstring, so a change to agent.py that the page does not follow fails here."""
    import ast

    def function(source: str) -> str:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and node.name == "close_calls":
                if ast.get_docstring(node) is not None:
                    node.body = node.body[1:]
                return ast.dump(node)
        raise AssertionError("no close_calls found")

    page = (ROOT / "lessons" / "16-take-it-home" / "page.md").read_text(encoding="utf-8")
    cell = page[page.index("def close_calls(log):"):]
    cell = cell[:cell.index("\n\n")]
    assert function(cell) == function(AGENT.read_text(encoding="utf-8")), (
        "lessons/16-take-it-home/page.md: the cell's close_calls is no longer agent.py's; "
        "copy agent.py's again, or change the sentence that says it is the same")
