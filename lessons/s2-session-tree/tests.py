"""Side quest S2's lab tests: the session tree.

Lab1 checks that SessionTree reads a file as a tree (point S2.1): parent ids, lesson 11's flat
files as one branch, the leaf read off the last line, the transcript as the path, and a clear
error naming the line for every tree that is not one. Lab2 checks that it writes one (point S2.2):
messages hang off the leaf, going back is one appended line, ids never repeat, nothing is kept in
memory, and a power cut anywhere leaves the old branch or the new one. Each test's docstring is
its checklist line on the page, word for word. Run them with

    python lab/lab_check.py --harness harness.py --lesson S2 tests.py [--lab 1|2]

S2 is a side quest: its starting file is lesson 11's last solution, and no later lesson needs it.
"""
import json
import re
import sys
import unittest

import harness
import lab

LESSON = "S2"
LOG = "session.jsonl"


# ------------------------------------------------------------------------------------- helpers

def _line(entry):
    return json.dumps(entry) + "\n"


def _msg(n, parent="", text=None, role="user"):
    """A message entry e<n>; parent "" leaves parent_id out (lesson 11's shape)."""
    message = lab.user(text or f"message {n}") if role == "user" else lab.say(text or f"reply {n}")
    entry = {"id": f"e{n}", "type": "message", "message": message}
    if parent != "":
        entry = {"id": f"e{n}", "parent_id": parent, "type": "message", "message": message}
    return entry


def _leaf(n, parent):
    return {"id": f"e{n}", "parent_id": parent, "type": "leaf"}


def _file(*entries):
    return "".join(_line(entry) for entry in entries)


def _forked():
    """A file with two branches. e1..e4 is the first attempt; e5 goes back to e2; e6 and e7 are
    the second attempt. File order is e1..e7; the conversation is e1 e2 e6 e7."""
    return _file(_msg(1, None, "Fix the failing test."),
                 _msg(2, "e1", "I'll read the test first.", role="assistant"),
                 _msg(3, "e2", "No: patch the code, not the test."),
                 _msg(4, "e3", "Patched the test instead.", role="assistant"),
                 _leaf(5, "e2"),
                 _msg(6, "e2", "Read the code, then fix it."),
                 _msg(7, "e6", "Fixed in app.py.", role="assistant"))


def _texts(messages):
    out = []
    for m in messages:
        content = m["content"]
        out.append(content if isinstance(content, str)
                   else "".join(b.get("text", "") for b in content))
    return out


def _ids(entries):
    return [entry.get("id") for entry in entries]


def _what(value):
    text = repr(value)
    return text if len(text) <= 90 else text[:87] + "..."


class _TooLong(Exception):
    """Raised inside the reader's code when it has run far more lines than the job needs."""


def _bounded(call, steps=200_000):
    """Run `call()`, stopping it with _TooLong once harness.py has run `steps` lines: a walk that
    never notices a loop must fail a test, fast, not hang the page."""
    source = harness.__file__
    count = [0]

    def local(frame, event, arg):
        if event == "line":
            count[0] += 1
            if count[0] > steps:
                raise _TooLong()
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename == source else None

    sys.settrace(tracer)
    try:
        return call()
    finally:
        sys.settrace(None)


def _new_session(ws, n=5):
    """A session of n messages written by the reader's SessionTree, alternating user, assistant."""
    tree = harness.SessionTree(ws, LOG)
    messages = [lab.user(f"u{k}") if k % 2 else lab.say(f"a{k}") for k in range(1, n + 1)]
    for message in messages:
        tree.append_message(message)
    return tree, messages


class _LabCase(unittest.TestCase):
    longMessage = False
    maxDiff = None

    def refuses(self, what, call, line, words):
        """`call()` must raise ValueError(f"{LOG}, line {line}: ...") (the spec's form: the
        line at fault comes first, so a message that names two lines still says which one is
        wrong); `words` say why, for the reader."""
        try:
            got = _bounded(call)
        except _TooLong:
            self.fail(f"{what} was still walking after 200,000 steps through a file of a few "
                      f"lines: the walk goes round a loop and never notices. Expected "
                      f"ValueError naming line {line} ({words}). Keep the ids you have passed, "
                      "and stop when a parent is one of them.")
        except ValueError as error:
            if not re.search(rf"\bline {line}\b", str(error)):
                self.fail(f"{what} raised ValueError({str(error)!r}), which does not name "
                          f"line {line}, the line at fault ({words}). Count lines from 1.")
            if not str(error).startswith(f"{LOG}, line {line}:"):
                self.fail(f"{what} raised ValueError({str(error)!r}); expected it to begin "
                          f"{LOG + ', line ' + str(line) + ':'!r}, the line at fault ({words}). "
                          "The spec's form is f\"{path}, line {n}: ...\": the line it begins "
                          "with is the one to fix, whatever other line the message names.")
            return
        except Exception as error:
            self.fail(f"{what} raised {type(error).__name__}: {error}. Expected ValueError "
                      f"naming line {line} ({words}).")
        self.fail(f"{what} returned {_what(got)}; expected ValueError naming line {line} "
                  f"({words}). A tree that is not a tree is never replayed as a guess.")

    def call(self, what, call):
        """Call the reader's code; an exception becomes a sentence, not an error."""
        try:
            return _bounded(call)
        except _TooLong:
            self.fail(f"{what} ran 200,000 lines of harness.py on a file of a few lines: a walk "
                      "that never ends?")
        except Exception as error:
            self.fail(f"{what} raised {type(error).__name__}: {error}")


# --------------------------------------------------------------------- lab 1: reading the tree

class Lab1(_LabCase):

    def test_flat_file_is_one_branch(self):
        """A file lesson 11's SessionLog wrote (no parent ids) loads as one branch: each entry's
        parent_id is the id on the line before (None on line 1), replay() is the four messages,
        leaf() is e4, and reading wrote nothing."""
        ws = lab.Workspace()
        old = harness.SessionLog(ws, LOG)
        messages = [lab.user("Hi"), lab.say("Hello."), lab.user("Port?"), lab.say("9090.")]
        for message in messages:
            old.append_message(message)
        before, writes = ws.read_text(LOG), len(ws.writes)
        tree = harness.SessionTree(ws, LOG)
        entries = self.call("entries()", tree.entries)
        parents = [entry.get("parent_id", "(none)") for entry in entries]
        if parents != [None, "e1", "e2", "e3"]:
            self.fail(f"entries() gave the parent_ids {parents}; expected [None, 'e1', 'e2', "
                      "'e3']: an entry without a parent_id hangs off the line before it.")
        replay = self.call("replay()", tree.replay)
        if replay != messages:
            self.fail(f"replay() gave {lab.shape(replay) or 'nothing'}; expected all four "
                      f"messages, {lab.shape(messages)}: an old file is one branch.")
        leaf = self.call("leaf()", tree.leaf)
        if leaf != "e4":
            self.fail(f"leaf() gave {leaf!r}; expected 'e4', the last line's id.")
        if ws.read_text(LOG) != before or len(ws.writes) != writes:
            self.fail("reading the old file changed it: migrate entries as you read them, and "
                      "leave the file alone.")

    def test_explicit_parents_are_kept(self):
        """parent_ids written in the file are kept as written, and an explicit "parent_id": null
        stays None: it starts a new conversation, it is not an old entry to migrate."""
        ws = lab.Workspace({LOG: _file(_msg(1, None), _msg(2, "e1"), _msg(3, None),
                                       _msg(4, "e1"))})
        tree = harness.SessionTree(ws, LOG)
        parents = [entry.get("parent_id", "(none)")
                   for entry in self.call("entries()", tree.entries)]
        if parents != [None, "e1", None, "e1"]:
            self.fail(f"entries() gave the parent_ids {parents}; expected [None, 'e1', None, "
                      "'e1'] as written. Only an entry with no parent_id key at all takes the "
                      "line before; null is a root.")

    def test_old_line_after_a_tree_line(self):
        """In a file that mixes shapes, an entry with no parent_id takes the entry on the line
        above whatever its type: after a leaf entry pointing at e1, an old-shape e4 has the
        parent e3 (the leaf line), and replay() is e1 then e4."""
        ws = lab.Workspace({LOG: _file(_msg(1), _msg(2, text="reply 2"), _leaf(3, "e1"),
                                       _msg(4, text="message 4"))})
        tree = harness.SessionTree(ws, LOG)
        parents = [entry.get("parent_id", "(none)")
                   for entry in self.call("entries()", tree.entries)]
        if parents[3:] != ["e3"]:
            self.fail(f"entries() gave e4, an entry with no parent_id after the leaf line e3, the "
                      f"parent {parents[3:]}; expected ['e3']: the entry on the line above, "
                      "whatever its type, not the last message above it.")
        replay = self.call("replay()", tree.replay)
        if _texts(replay) != _texts([_msg(1)["message"], _msg(4, text="message 4")["message"]]):
            self.fail(f"replay() gave {_texts(replay)}; expected message 1, then message 4: "
                      "e4 carries on from where the leaf line put you.")

    def test_leaf_is_read_off_the_last_line(self):
        """leaf() is the last line's id when it is a message, the last line's parent_id when it is
        a leaf entry, and None when there is no file (which reading does not create)."""
        ws = lab.Workspace()
        tree = harness.SessionTree(ws, LOG)
        got = self.call("leaf() with no file", tree.leaf)
        if got is not None or ws.exists(LOG):
            self.fail(f"with no file, leaf() gave {got!r} and the file "
                      f"{'now exists' if ws.exists(LOG) else 'does not exist'}; expected None, "
                      "and no file.")
        ws = lab.Workspace({LOG: _forked()})
        got = self.call("leaf()", harness.SessionTree(ws, LOG).leaf)
        if got != "e7":
            self.fail(f"leaf() of a file ending in message e7 gave {got!r}; expected 'e7'.")
        ws = lab.Workspace({LOG: _forked() + _line(_leaf(8, "e3"))})
        got = self.call("leaf()", harness.SessionTree(ws, LOG).leaf)
        if got != "e3":
            self.fail(f"the last line is a leaf entry pointing at e3, and leaf() gave {got!r}; "
                      "expected 'e3'. A leaf entry moves where you are; it is not a message.")

    def test_replay_follows_the_path_not_the_file(self):
        """In a file holding two attempts, replay() is the path from the root to the last line,
        e1 e2 e6 e7, not the seven lines in file order; rows() pairs them with those ids; leaf
        entries are never in it."""
        ws = lab.Workspace({LOG: _forked()})
        tree = harness.SessionTree(ws, LOG)
        rows = self.call("rows()", tree.rows)
        ids = [row[0] for row in rows]
        if ids != ["e1", "e2", "e6", "e7"]:
            hint = (" That is the file in order: the conversation is the path from the root to "
                    "where you are." if len(ids) >= 6 else "")
            self.fail(f"rows() gave the ids {ids}; expected ['e1', 'e2', 'e6', 'e7'].{hint}")
        replay = self.call("replay()", tree.replay)
        want = ["Fix the failing test.", "I'll read the test first.",
                "Read the code, then fix it.", "Fixed in app.py."]
        if _texts(replay) != want:
            self.fail(f"replay() gave {_texts(replay)}; expected {want}.")

    def test_parents_may_come_later_in_the_file(self):
        """A hand-edited file whose entry e2 names a parent written after it (e3, whose parent is
        e1): path_to('e2') and rows() follow the parent links, e1 e3 e2, not the file's order."""
        ws = lab.Workspace({LOG: _file(_msg(1, None, "Fix the failing test."),
                                       _msg(2, "e3", "Fixed in app.py.", role="assistant"),
                                       _msg(3, "e1", "Read the code first."),
                                       _leaf(4, "e2"))})
        tree = harness.SessionTree(ws, LOG)
        got = _ids(self.call("path_to('e2')", lambda: tree.path_to("e2")))
        if got != ["e1", "e3", "e2"]:
            self.fail(f"path_to('e2') gave the ids {got}; expected ['e1', 'e3', 'e2']: e2's "
                      "parent is e3, and e3's is e1, wherever they sit in the file.")
        ids = [row[0] for row in self.call("rows()", tree.rows)]
        if ids != ["e1", "e3", "e2"]:
            self.fail(f"rows() gave the ids {ids}; expected ['e1', 'e3', 'e2']: the order of the "
                      "path, root first, not the order of the file. Nothing makes a parent come "
                      "before its child in the file: a hand edit can put it after.")

    def test_path_to_any_entry(self):
        """path_to(id) gives the entries from the root down to that id, whichever branch it is on
        (e4: e1 e2 e3 e4; e7: e1 e2 e6 e7), and an id that is not in the file raises
        ValueError."""
        ws = lab.Workspace({LOG: _forked()})
        tree = harness.SessionTree(ws, LOG)
        for target, want in (("e4", ["e1", "e2", "e3", "e4"]), ("e7", ["e1", "e2", "e6", "e7"]),
                             ("e1", ["e1"])):
            got = _ids(self.call(f"path_to({target!r})", lambda: tree.path_to(target)))
            if got != want:
                self.fail(f"path_to({target!r}) gave the ids {got}; expected {want}, root first.")
        try:
            got = _bounded(lambda: tree.path_to("e99"))
        except ValueError:
            return
        except Exception as error:
            self.fail(f"path_to('e99') raised {type(error).__name__}: {error}; expected "
                      "ValueError: there is no such entry.")
        self.fail(f"path_to('e99') returned {_what(got)}; expected ValueError: there is no "
                  "such entry.")

    def test_a_duplicate_id_is_refused(self):
        """An id used twice raises ValueError naming the second line that uses it, from rows(),
        replay() and path_to(), also when neither line is on the path being walked, and when the
        second line is a leaf entry reusing a message's id."""
        ws = lab.Workspace({LOG: _file(_msg(1, None), _msg(2, "e1"), _msg(3, "e2"),
                                       _msg(2, "e3"), _msg(5, "e2"))})
        tree = harness.SessionTree(ws, LOG)
        for what, call in (("rows()", tree.rows), ("replay()", tree.replay),
                           ("path_to('e3')", lambda: tree.path_to("e3"))):
            self.refuses(what, call, 4, "e2 is used on lines 2 and 4")
        ws = lab.Workspace({LOG: _file(_msg(1, None), _msg(2, "e1"), _msg(3, "e2"),
                                       _msg(3, "e2"), _leaf(5, "e2"))})
        self.refuses("replay()", harness.SessionTree(ws, LOG).replay, 4,
                     "e3 is used on lines 3 and 4, off the path e1 e2 the leaf on line 5 "
                     "asks for; the file is still not a tree")
        ws = lab.Workspace({LOG: _file(_msg(1, None), _msg(2, "e1"), _leaf(2, "e1"),
                                       _msg(4, "e2"))})
        tree = harness.SessionTree(ws, LOG)
        for what, call in (("rows()", tree.rows), ("replay()", tree.replay)):
            self.refuses(what, call, 3, "the leaf entry on line 3 reuses e2, the id of the "
                         "message on line 2; a leaf entry's id counts as much as a message's")

    def test_a_missing_parent_is_refused(self):
        """A parent_id on the path that names no entry raises ValueError naming the line of the
        entry that names it, for a message and for a leaf entry alike."""
        ws = lab.Workspace({LOG: _file(_msg(1, None), _msg(2, "e1"), _msg(3, "e9"),
                                       _msg(4, "e3"))})
        tree = harness.SessionTree(ws, LOG)
        self.refuses("replay()", tree.replay, 3, "line 3's parent e9 is not in the file")
        self.refuses("path_to('e4')", lambda: tree.path_to("e4"), 3,
                     "line 3's parent e9 is not in the file")
        ws = lab.Workspace({LOG: _file(_msg(1, None), _msg(2, "e1"), _leaf(3, "e8"))})
        self.refuses("replay()", harness.SessionTree(ws, LOG).replay, 3,
                     "the leaf entry on line 3 points at e8, which is not in the file")

    def test_a_cycle_is_refused(self):
        """A loop of parent ids raises ValueError naming the line whose parent_id closes it, fast:
        e2 -> e4 -> e3 -> e2 names line 2, and an entry that is its own parent names its line."""
        ws = lab.Workspace({LOG: _file(_msg(1, None), _msg(2, "e4"), _msg(3, "e2"),
                                       _msg(4, "e3"))})
        tree = harness.SessionTree(ws, LOG)
        self.refuses("replay()", tree.replay, 2, "e4's parents lead to e3, e2 and back to e4")
        ws = lab.Workspace({LOG: _file(_msg(1, None), _msg(2, "e2"))})
        self.refuses("replay()", harness.SessionTree(ws, LOG).replay, 2,
                     "e2 is its own parent")

    def test_a_torn_line_is_still_refused(self):
        """Lesson 11's rule holds in a tree: a torn last line makes entries(), leaf(), rows() and
        replay() raise ValueError naming it. It is never skipped."""
        whole = _forked()
        ws = lab.Workspace({LOG: whole[:-30]})
        tree = harness.SessionTree(ws, LOG)
        for what, call in (("entries()", tree.entries), ("leaf()", tree.leaf),
                           ("rows()", tree.rows), ("replay()", tree.replay)):
            self.refuses(what, call, 7, "line 7 is torn: the power went out while it was written")

    def test_nothing_is_kept_between_calls(self):
        """A SessionTree keeps nothing but ws and path: after another writer appends a line that
        goes back to e2, the same object's leaf() and replay() already say so."""
        ws = lab.Workspace({LOG: _file(_msg(1, None), _msg(2, "e1"), _msg(3, "e2"),
                                       _msg(4, "e3"))})
        tree = harness.SessionTree(ws, LOG)
        self.call("replay()", tree.replay)
        self.call("leaf()", tree.leaf)
        ws.append_text(LOG, _line(_leaf(5, "e2")))
        leaf = self.call("leaf()", tree.leaf)
        replay = self.call("replay()", tree.replay)
        if leaf != "e2" or _texts(replay) != ["message 1", "message 2"]:
            self.fail(f"after a leaf line pointing at e2 was appended, leaf() gave {leaf!r} and "
                      f"replay() {_texts(replay)}; expected 'e2' and the first two messages. "
                      "Read the file on every call; remember nothing.")


    def test_no_file_is_an_empty_session(self):
        """A SessionTree whose file does not exist yet, or is empty, has no rows and replays to []."""
        for files, what in (({}, "no file yet"), ({LOG: ""}, "an empty file")):
            tree = harness.SessionTree(lab.Workspace(files), LOG)
            rows = self.call("rows()", tree.rows)
            replay = self.call("replay()", tree.replay)
            self.assertEqual((rows, replay), ([], []), f"with {what}, rows() gave {rows!r} and "
                             f"replay() {replay!r}; expected [] and []: a session with no line "
                             "yet has no path to follow.")

# ----------------------------------------------------------------------- lab 2: going back

class Lab2(_LabCase):

    def test_messages_hang_off_the_leaf(self):
        """Three messages appended to a new file get the ids e1, e2, e3 and the parent_ids None,
        e1, e2, each line holding "id", "parent_id", "type": "message" and "message"; only
        appends reach the disk."""
        ws = lab.Workspace()
        tree = harness.SessionTree(ws, LOG)
        ids = [self.call("append_message()", lambda m=m: tree.append_message(m))
               for m in (lab.user("Hi"), lab.say("Hello."), lab.user("Port?"))]
        if ids != ["e1", "e2", "e3"]:
            self.fail(f"append_message returned {ids}; expected ['e1', 'e2', 'e3'].")
        lines = [json.loads(line) for line in ws.read_text(LOG).splitlines()]
        want = [(f"e{n}", parent, "message") for n, parent in ((1, None), (2, "e1"), (3, "e2"))]
        got = [(entry.get("id"), entry.get("parent_id", "(none)"), entry.get("type"))
               for entry in lines]
        if got != want or not all("message" in entry and "parent_id" in entry for entry in lines):
            self.fail(f"the file holds (id, parent_id, type) {got}; expected {want}, each line "
                      "with its message and a parent_id key (None for the first).")
        ops = {write[0] for write in ws.writes}
        if ops != {"append"}:
            self.fail(f"ws.writes shows {sorted(ops)}; expected appends only.")

    def test_appending_to_a_lesson_11_file(self):
        """Appended to a flat file lesson 11 wrote, the next message is e3 with parent_id e2, the
        old lines are untouched, and replay() is all three messages."""
        ws = lab.Workspace()
        old = harness.SessionLog(ws, LOG)
        old.append_message(lab.user("Hi"))
        old.append_message(lab.say("Hello."))
        before = ws.read_text(LOG)
        tree = harness.SessionTree(ws, LOG)
        new = self.call("append_message()", lambda: tree.append_message(lab.user("Again?")))
        last = json.loads(ws.read_text(LOG).splitlines()[-1])
        if new != "e3" or last.get("parent_id") != "e2":
            self.fail(f"the new line has id {new!r} and parent_id {last.get('parent_id')!r}; "
                      "expected 'e3' and 'e2': it hangs off where the old file ends.")
        if not ws.read_text(LOG).startswith(before):
            self.fail("the old lines changed: an old file is read as a branch, never rewritten.")
        if _texts(self.call("replay()", tree.replay)) != ["Hi", "Hello.", "Again?"]:
            self.fail(f"replay() gave {_texts(tree.replay())}; expected the three messages.")

    def test_going_back_is_one_appended_line(self):
        """After five messages, branch("e3") returns e6 and appends exactly one line,
        {"id": "e6", "parent_id": "e3", "type": "leaf"}; the file before is the start of the file
        after; leaf() is e3 and replay() the first three messages."""
        ws = lab.Workspace()
        tree, messages = _new_session(ws)
        before, writes = ws.read_text(LOG), len(ws.writes)
        got = self.call('branch("e3")', lambda: tree.branch("e3"))
        new_ops = [write[0] for write in ws.writes[writes:]]
        if new_ops != ["append"]:
            self.fail(f'branch("e3") made the writes {new_ops}; expected one append. Going back '
                      "is a line that points, never a rewrite: the first attempt must survive.")
        after = ws.read_text(LOG)
        if not after.startswith(before):
            self.fail("the file before branch() is not the start of the file after it: a line "
                      "once written is never touched.")
        added = after[len(before):].splitlines()
        try:
            entry = json.loads(added[0]) if len(added) == 1 else None
        except ValueError:
            entry = None
        want = {"id": "e6", "parent_id": "e3", "type": "leaf"}
        if entry != want or got != "e6":
            self.fail(f'branch("e3") returned {got!r} and added {len(added)} line(s): '
                      f"{_what(added)}; expected it to return 'e6' and add one line, {want}.")
        leaf, replay = self.call("leaf()", tree.leaf), self.call("replay()", tree.replay)
        if leaf != "e3" or replay != messages[:3]:
            self.fail(f"after the branch, leaf() is {leaf!r} and replay() {lab.shape(replay)}; "
                      f"expected 'e3' and {lab.shape(messages[:3])}.")

    def test_going_back_to_where_you_are(self):
        """branch() to the entry you are already at still appends its one leaf line and returns
        that line's id: the call is a thing that happened, and the file records it."""
        ws = lab.Workspace()
        tree, messages = _new_session(ws)
        before = ws.read_text(LOG)
        got = self.call('branch("e5")', lambda: tree.branch("e5"))
        added = ws.read_text(LOG)[len(before):].splitlines()
        if got != "e6" or len(added) != 1:
            self.fail(f'branch("e5"), at the end of a five-message session, returned {got!r} and '
                      f"added {len(added)} line(s); expected 'e6' and one leaf line. branch "
                      "always appends, even to where you are.")

    def test_the_next_message_continues_from_the_branch(self):
        """After branch("e3"), the next message is e7 with parent_id e3, replay() is e1 e2 e3 e7,
        and the branch left behind is still there: path_to("e5") is e1 to e5."""
        ws = lab.Workspace()
        tree, messages = _new_session(ws)
        self.call('branch("e3")', lambda: tree.branch("e3"))
        new = self.call("append_message()", lambda: tree.append_message(lab.say("Another way.")))
        last = json.loads(ws.read_text(LOG).splitlines()[-1])
        if new != "e7" or last.get("parent_id") != "e3":
            self.fail(f"the message after the branch has id {new!r} and parent_id "
                      f"{last.get('parent_id')!r}; expected 'e7' hanging off 'e3'. It must hang "
                      "off leaf(), not off the line above it or the last message in the file.")
        ids = [row[0] for row in self.call("rows()", tree.rows)]
        if ids != ["e1", "e2", "e3", "e7"]:
            self.fail(f"rows() gave the ids {ids}; expected ['e1', 'e2', 'e3', 'e7'].")
        old = _ids(self.call('path_to("e5")', lambda: tree.path_to("e5")))
        if old != ["e1", "e2", "e3", "e4", "e5"]:
            self.fail(f'path_to("e5") gave {old}; expected e1 to e5: the first attempt stays.')

    def test_ids_never_repeat(self):
        """Through three branches and four more messages, every id in the file is used once, each
        is "e" + its line number, and every append returned the id it wrote."""
        ws = lab.Workspace()
        tree, _ = _new_session(ws, 4)
        returned = []
        for target in ("e2", "e1", "e3"):
            returned.append(self.call(f"branch({target!r})", lambda t=target: tree.branch(t)))
            for k in range(2 if target != "e3" else 0):
                returned.append(self.call("append_message()", lambda k=k: tree.append_message(
                    lab.user(f"try {len(returned)}"))))
        returned.append(self.call("append_message()",
                                  lambda: tree.append_message(lab.say("last"))))
        entries = [json.loads(line) for line in ws.read_text(LOG).splitlines()]
        ids = [entry.get("id") for entry in entries]
        want = [f"e{n}" for n in range(1, len(entries) + 1)]
        if ids != want:
            dup = sorted({i for i in ids if ids.count(i) > 1})
            self.fail(f"the file's ids are {ids}; expected {want}" +
                      (f": {dup} used twice. Count the file's lines, not the messages on your "
                       "branch." if dup else "."))
        if returned != ids[4:]:
            self.fail(f"the calls returned {returned}; expected {ids[4:]}, the ids they wrote.")

    def test_a_branch_points_it_does_not_copy(self):
        """Going back to e3 and saying one thing adds two lines, not five: the new branch's first
        three rows are e1, e2, e3 themselves, and no message is in the file twice."""
        ws = lab.Workspace()
        tree, messages = _new_session(ws)
        self.call('branch("e3")', lambda: tree.branch("e3"))
        self.call("append_message()", lambda: tree.append_message(lab.user("Try B.")))
        lines = ws.read_text(LOG).splitlines()
        if len(lines) != 7:
            self.fail(f"the file has {len(lines)} lines; expected 7 (five messages, one leaf "
                      "line, one new message). A branch points at e3; it does not copy e1 to "
                      "e3 again.")
        ids = [row[0] for row in self.call("rows()", tree.rows)]
        if ids[:3] != ["e1", "e2", "e3"]:
            self.fail(f"the new branch's rows begin {ids[:3]}; expected e1, e2, e3 themselves.")
        bodies = [json.dumps(json.loads(line).get("message"), sort_keys=True) for line in lines
                  if json.loads(line).get("type") == "message"]
        if len(bodies) != len(set(bodies)):
            self.fail("a message is in the file twice: a branch must point at the earlier "
                      "messages, not copy them.")

    def test_where_you_are_survives_a_reboot(self):
        """branch("e2") on one SessionTree, then a new SessionTree on the rebooted disk: its
        leaf() is e2, replay() the first two messages, and its next message hangs off e2."""
        ws = lab.Workspace()
        tree, messages = _new_session(ws, 4)
        self.call('branch("e2")', lambda: tree.branch("e2"))
        disk = ws.reboot()
        again = harness.SessionTree(disk, LOG)
        leaf, replay = self.call("leaf()", again.leaf), self.call("replay()", again.replay)
        if leaf != "e2" or replay != messages[:2]:
            self.fail(f"after a reboot, leaf() is {leaf!r} and replay() {lab.shape(replay)}; "
                      f"expected 'e2' and {lab.shape(messages[:2])}: where you are must be in "
                      "the file, not in the object that branched.")
        self.call("append_message()", lambda: again.append_message(lab.user("On from e2.")))
        last = json.loads(disk.read_text(LOG).splitlines()[-1])
        if last.get("parent_id") != "e2":
            self.fail(f"the next message's parent_id is {last.get('parent_id')!r}; expected "
                      "'e2'.")

    def test_two_trees_on_one_file_agree(self):
        """Two SessionTrees on one file: A goes back to e2, then B to e4, then A appends. The new
        message hangs off e4, the file's leaf: where you are is read from the file at every
        append, never remembered by the object that branched."""
        ws = lab.Workspace()
        a, messages = _new_session(ws, 4)
        b = harness.SessionTree(ws, LOG)
        self.call('A.branch("e2")', lambda: a.branch("e2"))
        self.call('B.branch("e4")', lambda: b.branch("e4"))
        self.call("A.append_message()", lambda: a.append_message(lab.user("After B's trip.")))
        last = json.loads(ws.read_text(LOG).splitlines()[-1])
        if last.get("parent_id") != "e4":
            self.fail(f"A's new message has parent_id {last.get('parent_id')!r}; expected 'e4', "
                      "where B's branch left the file. A remembered its own branch to e2: read "
                      "the leaf from the file at every append, and keep nothing on the object.")
        replay = self.call("replay()", a.replay)
        if _texts(replay) != _texts(messages) + ["After B's trip."]:
            self.fail(f"replay() is {_texts(replay)}; expected the four messages, then "
                      "\"After B's trip.\".")

    def test_branch_refuses_what_is_not_a_message(self):
        """branch() of an id that is not in the file (e99), or of a leaf entry, raises ValueError
        naming the id and writes nothing."""
        ws = lab.Workspace()
        tree, _ = _new_session(ws, 3)
        leaf_id = self.call('branch("e2")', lambda: tree.branch("e2"))
        for bad in ("e99", leaf_id):
            before = ws.read_text(LOG)
            try:
                got = _bounded(lambda: tree.branch(bad))
            except ValueError as error:
                if str(bad) not in str(error):
                    self.fail(f"branch({bad!r}) raised ValueError({str(error)!r}), which does not "
                              f"name {bad!r}.")
            except Exception as error:
                self.fail(f"branch({bad!r}) raised {type(error).__name__}: {error}; expected "
                          "ValueError naming it.")
            else:
                self.fail(f"branch({bad!r}) returned {got!r}; expected ValueError: "
                          f"{'there is no such entry' if bad == 'e99' else 'that is a leaf entry, not a message'}.")
            if ws.read_text(LOG) != before:
                self.fail(f"branch({bad!r}) refused but wrote to the file; it must write nothing.")

    def test_a_torn_file_takes_no_new_line(self):
        """On a file whose last line is torn, append_message() and branch("e1") raise
        ValueError naming the torn line, as lesson 11's append did, and write nothing."""
        ws = lab.Workspace()
        _new_session(ws, 3)
        text = ws.read_text(LOG)
        ws = lab.Workspace({LOG: text[:-20]})
        tree = harness.SessionTree(ws, LOG)
        for what, call in (("append_message(...)", lambda: tree.append_message(lab.user("u4"))),
                           ('branch("e1")', lambda: tree.branch("e1"))):
            before = ws.read_text(LOG)
            try:
                got = _bounded(call)
            except ValueError as error:
                if not re.search(r"\bline 3\b", str(error)):
                    self.fail(f"{what} raised ValueError({str(error)!r}), which does not name "
                              "line 3, the torn line.")
            except Exception as error:
                self.fail(f"{what} on a torn file raised {type(error).__name__}: {error}; "
                          "expected lesson 11's ValueError naming line 3.")
            else:
                self.fail(f"{what} on a file whose line 3 is torn returned {_what(got)}; expected "
                          "ValueError naming line 3. A new line after a torn one hides the "
                          "damage: let self.entries() refuse the file before anything is written.")
            if ws.read_text(LOG) != before:
                self.fail(f"{what} on a torn file raised but wrote to it first; it must write "
                          "nothing. Read the file (self.entries()) before you append.")

    def test_a_harness_runs_on_a_branch(self):
        """Harness(messages=tree.replay()) after branch("e2"), saving with persist_to(tree): the
        model is sent e1, e2 and the new prompt only, and afterwards tree.replay() equals
        h.messages."""
        ws = lab.Workspace()
        tree, messages = _new_session(ws, 4)
        self.call('branch("e2")', lambda: tree.branch("e2"))
        model = lab.ScriptedModel([lab.say("Second attempt.")])
        h = harness.Harness(model, harness.SYSTEM, [], messages=self.call("replay()", tree.replay))
        h.subscribe(harness.persist_to(tree))
        self.call("the run", lambda: lab.drive(h.prompt("Try it the other way.")))
        sent = model.calls[0].messages if model.calls else []
        if _texts(sent) != ["u1", "a2", "Try it the other way."]:
            self.fail(f"the model was sent {_texts(sent)}; expected ['u1', 'a2', 'Try it the "
                      "other way.']: the branch, not the file.")
        replay = self.call("replay()", tree.replay)
        if replay != list(h.messages):
            self.fail(f"afterwards tree.replay() is {lab.shape(replay)} and h.messages "
                      f"{lab.shape(h.messages)}; expected them equal.")

    def test_a_power_cut_leaves_the_old_branch_or_the_new(self):
        """The power goes out at every append of "five messages, back to e3, two more". After the
        reboot (a torn last line deleted by hand, as lesson 11 asks) replay() is the transcript of
        the last write that returned or of the one in flight: the old leaf or the new one, never
        anything in between."""
        five = [lab.user("u1"), lab.say("a2"), lab.user("u3"), lab.say("a4"), lab.user("u5")]
        new = [lab.user("B1"), lab.say("B2")]
        # the transcript once k writes have returned: 5 messages, the branch, 2 more
        states = [five[:n] for n in range(0, 6)] + [five[:3] + new[:n] for n in range(0, 3)]

        def program(ws):
            tree = harness.SessionTree(ws, LOG)
            for message in five:
                tree.append_message(message)
            tree.branch("e3")
            for message in new:
                tree.append_message(message)

        def check(disk, point):
            text = disk.read_text(LOG) if disk.exists(LOG) else ""
            if text and not text.endswith("\n"):      # the append in flight: a person deletes it
                disk = lab.Workspace({LOG: text[:text.rfind("\n") + 1]})
            replay = harness.SessionTree(disk, LOG).replay()
            allowed = states[point.completed:point.completed + 2]
            assert replay in allowed, (
                f"replay() gave {lab.shape(replay) or 'nothing'}, expected "
                + " or ".join(lab.shape(a) or "nothing" for a in allowed)
                if allowed else f"the program made more than {len(states) - 1} writes")

        report = self.call("the program", lambda: lab.explore_crashes(program, check,
                                                                       offsets=(0, 0.6)))
        if not report.ok:
            first = report.first_failure
            self.fail(f"{len(report.failures)} of {report.tried} crash points left a transcript "
                      f"that is neither the old branch nor the new. First: {first}: "
                      f"{first.reason.removeprefix('AssertionError: ')}. Each step must be one appended line, and the only "
                      "writes are the eight appends.")

if __name__ == "__main__":
    unittest.main()
