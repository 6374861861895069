"""Lesson 06's lab tests: the budget.

Lab1 checks truncate_head and the read tool (point 6.1). Lab2 checks truncate_tail, the bash tool
and the write tool reading its arguments through str_arg (point 6.2). Every tool result stays
within MAX_LINES lines and MAX_BYTES bytes, and says how to get the rest. Each test's docstring is
its checklist line on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 6 tests.py [--lab 1|2]

Every message a check fails with is written for the reader: what was expected, what came back,
and where the two first part. Long texts are never handed to assertEqual (its diff of two
2,000-line strings takes longer than the time limit); _same names the first differing line.
"""
import unittest

import harness
import lab

LESSON = 6


# ------------------------------------------------------------------------------------- helpers

def _numbered(n, first=1):
    return "".join(f"line {k}\n" for k in range(first, n + 1))


def _clip(value, width=70):
    """repr(value), cut short for a failure message."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def _lines(n):
    return f"{n} line" if n == 1 else f"{n} lines"


def _around(a, b):
    """The two texts from a little before the first character where they differ."""
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, k - 15)
    lead = "..." if start else ""
    return lead + _clip(a[start:], 55), lead + _clip(b[start:], 55)


def _first_difference(got, want):
    """None if the two texts are equal; otherwise a short sentence naming the first line where
    they part, counted from 1."""
    if got == want:
        return None
    if not isinstance(got, str):
        return f"it is not a string but {type(got).__name__}: {_clip(got)}"
    mine, theirs = got.splitlines(keepends=True), want.splitlines(keepends=True)
    for k, (a, b) in enumerate(zip(mine, theirs), 1):
        if a.rstrip("\n") != b.rstrip("\n"):
            a, b = _around(a, b)
            return f"line {k} is {a}, expected {b}"
    if len(mine) == len(theirs):
        return (f"the last line is {_clip(mine[-1])}, expected {_clip(theirs[-1])}: "
                "they differ only in the newline at the end")
    if len(mine) > len(theirs):
        return (f"it has {_lines(len(mine))}, expected {len(theirs)}: line {len(theirs) + 1} "
                f"should not be there, {_clip(mine[len(theirs)])}")
    return (f"it has {_lines(len(mine))}, expected {len(theirs)}: line {len(mine) + 1} is "
            f"missing, {_clip(theirs[len(mine)])}")


def _result(tool, arguments):
    """The toolResult of one call of `tool`, run as the loop runs it."""
    return lab.resolve(harness.run_tool([tool], lab.call(tool["name"], arguments, id="c1")))


class _Case(lab.LabCase):
    def same(self, got, want, what):
        """Fail with the first difference if the text `got` is not `want`."""
        difference = _first_difference(got, want)
        if difference:
            self.fail(f"{what}: {difference}")

    def need(self, name):
        """harness.<name>, or a FAIL that says harness.py does not have it yet."""
        function = getattr(harness, name, None)
        if not callable(function):
            self.fail(f"harness.py has no {name}: write it in region 2, under MAX_LINES and "
                      "MAX_BYTES.")
        return function

    def cut(self, name, text, want, **budget):
        """Check truncate_head or truncate_tail on a short text against (kept, lines_shown)."""
        shown = ", ".join([_clip(text, 40)] + [f"{k}={v}" for k, v in budget.items()])
        call = f"{name}({shown})"
        got = self.call(call, self.need(name), text, **budget)
        if not (isinstance(got, tuple) and len(got) == 2):
            self.fail(f"{call} should return a pair (kept, lines_shown), not {_clip(got)}")
        if got != want:
            self.fail(f"{call} returned {_clip(got)}, expected {_clip(want)}")

    def pair(self, call, function, *args, **kwargs):
        """The (kept, lines_shown) that function(*args, **kwargs) returns, or a FAIL that says it
        is not a pair."""
        got = self.call(call, function, *args, **kwargs)
        if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], str)):
            self.fail(f"{call} should return a pair (kept, lines_shown), kept a string, not "
                      f"{_clip(got)}")
        return got

    def status_on_its_own_line(self, content, want, what):
        """Fail, saying what to add, if `content` misses `want` only by the "\\n" that puts
        "Command exited" on a line of its own."""
        at = content.find("Command exited") if isinstance(content, str) else -1
        if at >= 0 and content != want and content[:at] + "\n" + content[at:] == want:
            self.fail(f"{what}: {_clip(content[max(0, at - 20):at])} comes just before "
                      "\"Command exited with code N\", one \"\\n\" short. Put \"\\n\" before "
                      "\"Command exited…\", always, so the status starts on a line of its own "
                      "even when the output already ends in a newline.")

    def tool(self, what, function, *args, **kwargs):
        """The tool function(*args, **kwargs) makes, or a failure that says what came back."""
        tool = self.call(what, function, *args, **kwargs)
        if not (isinstance(tool, dict) and callable(tool.get("execute"))):
            hint = " Did you forget to return it?" if tool is None else ""
            self.fail(f"{what} should return the tool, a dict with a callable \"execute\"; it "
                      f"returned {_clip(tool)}.{hint}")
        return tool

    def run_tool(self, tool, arguments):
        result = _result(tool, arguments)
        if not isinstance(result.get("content"), str):
            self.fail(f"{tool['name']}({arguments}) should give a string, not "
                      f"{_clip(result.get('content'))}")
        return result

    def ordinary(self, tool, arguments, what):
        """The content of a result that must not be an error."""
        result = self.run_tool(tool, arguments)
        if result["is_error"]:
            self.fail(f"{what} came back as an error (is_error True), ending "
                      f"{_clip(result['content'][-60:])}")
        return result["content"]

    def error(self, tool, arguments, want, what):
        """Check that a call comes back as the error `want`."""
        result = self.run_tool(tool, arguments)
        if not result["is_error"]:
            self.fail(f"{what} should be an error (is_error True); it came back as an ordinary "
                      f"result: {_clip(result['content'], 200)}")
        self.same(result["content"], want, f"the error for {what}")


# ----------------------------------------------------------------------------------------- lab 1

class Lab1(_Case):

    def test_head_whole_lines(self):
        """truncate_head("a\\nb\\nc\\n", max_lines=2) is ("a\\nb\\n", 2): whole lines from the start, newlines kept; a text that fits comes back whole, and "" gives ("", 0)."""
        self.cut("truncate_head", "a\nb\nc\n", ("a\nb\n", 2), max_lines=2)
        self.cut("truncate_head", "a\nb\n", ("a\nb\n", 2), max_lines=2)
        self.cut("truncate_head", "a\nb\nc", ("a\nb\nc", 3), max_lines=5)
        self.cut("truncate_head", "", ("", 0))

    def test_head_counts_bytes(self):
        """truncate_head counts UTF-8 bytes, not characters: with max_bytes=5, "éé\\n" (exactly 5 bytes) fits, and "ééé\\n" (7 bytes, the cut in the middle of an "é") gives ("", 0)."""
        self.cut("truncate_head", "éé\nx\n", ("éé\n", 1), max_bytes=5)
        self.cut("truncate_head", "ééé\nx\n", ("", 0), max_bytes=5)

    def test_head_default_budget(self):
        """By default the budget is MAX_LINES lines and MAX_BYTES bytes: 1,000 lines of 50 bytes (exactly MAX_BYTES) come back whole, one byte more loses the last line, and 2,001 short lines give 2,000."""
        if (harness.MAX_LINES, harness.MAX_BYTES) != (2000, 50_000):
            self.fail(f"MAX_LINES and MAX_BYTES should be 2000 and 50000, not "
                      f"{harness.MAX_LINES} and {harness.MAX_BYTES}")
        line = "x" * 49 + "\n"
        text = line * 1000
        kept, shown = self.pair("truncate_head(text)", self.need("truncate_head"), text)
        if (len(kept.encode()), shown) != (50_000, 1000):
            self.fail(f"1,000 lines of 50 bytes are exactly MAX_BYTES and should all come back; "
                      f"got {shown} lines, {len(kept.encode())} bytes")
        over = line * 999 + "x" * 50 + "\n"
        kept, shown = self.pair("truncate_head(text)", self.need("truncate_head"), over)
        if shown != 999:
            self.fail(f"with a last line one byte longer (50,001 bytes in all) the first 999 lines "
                      f"should come back and the last should not; got {shown} lines")
        kept, shown = self.pair("truncate_head(text)", self.need("truncate_head"), "z\n" * 2001)
        if shown != 2000 or kept != "z\n" * 2000:
            self.fail(f"2,001 short lines should give MAX_LINES of them, 2,000; got {shown}")

    def test_head_stops_at_the_first_misfit(self):
        """truncate_head stops at the first line that does not fit, even when a shorter line after it would."""
        self.cut("truncate_head", "short\n" + "x" * 40 + "\nok\n", ("short\n", 1), max_bytes=20)

    def test_head_windows_line_ends(self):
        """A "\\r\\n" line end is two bytes, and is kept as it is: truncate_head("a\\r\\nb\\r\\n", max_bytes=5) is ("a\\r\\n", 1), and max_bytes=6 keeps both lines."""
        self.cut("truncate_head", "a\r\nb\r\n", ("a\r\n", 1), max_bytes=5)
        self.cut("truncate_head", "a\r\nb\r\n", ("a\r\nb\r\n", 2), max_bytes=6)

    def test_read_small_file(self):
        """read of a small file returns all of it, exactly, and so does limit=3, with no note; offset=2, limit=1 returns only line 2, followed by "[Showing lines 2-2 of 3. Use offset=3 to continue.]"."""
        ws = lab.Workspace({"a.py": "A = 1\nB = 2\nC = 3\n"})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        self.same(self.ordinary(read, {"path": "a.py"}, "read of a.py"),
                  "A = 1\nB = 2\nC = 3\n", "read of the 3-line a.py")
        self.same(self.ordinary(read, {"path": "a.py", "limit": 3}, "read of a.py, limit=3"),
                  "A = 1\nB = 2\nC = 3\n",
                  "read of the 3-line a.py with limit=3 (no note: no line of the file is left)")
        self.same(self.ordinary(read, {"path": "a.py", "offset": 2, "limit": 1}, "read of a.py"),
                  "B = 2\n[Showing lines 2-2 of 3. Use offset=3 to continue.]",
                  "read of a.py with offset=2, limit=1")

    def test_read_limit_past_the_end(self):
        """A limit that runs past the end of the file is not a mistake: it reads what is there. On the 3-line "A = 1\\nB = 2\\nC = 3\\n", limit=10 returns all of it, offset=2, limit=10 returns lines 2 and 3, and offset=3, limit=5 returns "C = 3\\n", each with no note; an offset past the end is still an error with a limit: offset=4, limit=2 is "offset 4 is past the end of a.py: 3 lines"."""
        ws = lab.Workspace({"a.py": "A = 1\nB = 2\nC = 3\n"})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        for arguments, want in (({"limit": 10}, "A = 1\nB = 2\nC = 3\n"),
                                ({"offset": 2, "limit": 10}, "B = 2\nC = 3\n"),
                                ({"offset": 3, "limit": 5}, "C = 3\n")):
            shown = ", ".join(f"{k}={v}" for k, v in arguments.items())
            what = f"read of the 3-line a.py with {shown}"
            self.same(self.ordinary(read, {"path": "a.py", **arguments},
                                    f"{what} (a limit past the end reads to the end: a model "
                                    "cannot know how long a file is before it reads it)"),
                      want, f"{what} (a limit past the end reads to the end, with no note: no "
                      "line of the file is left)")
        self.error(read, {"path": "a.py", "offset": 4, "limit": 2},
                   "offset 4 is past the end of a.py: 3 lines",
                   "a read of the 3-line a.py with offset=4, limit=2 (check the offset whether or "
                   "not a limit came with it)")

    def test_read_blank_lines(self):
        """Blank lines are lines: "\\n \\n\\n" reads back exactly, 3 lines, offset=3 returns "\\n", and offset 4 is past the end, "offset 4 is past the end of blank.txt: 3 lines"; the empty empty.txt with limit=5 reads as ""."""
        ws = lab.Workspace({"blank.txt": "\n \n\n", "empty.txt": ""})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        what = "read of blank.txt, \"\\n \\n\\n\" (three lines, nothing but blanks)"
        self.same(self.ordinary(read, {"path": "blank.txt"}, what), "\n \n\n",
                  f"the {what}: a file of blank lines is not empty, and nothing in it is dropped")
        self.same(self.ordinary(read, {"path": "blank.txt", "offset": 3}, f"{what} at offset=3"),
                  "\n", f"the {what} at offset=3, its last line")
        self.error(read, {"path": "blank.txt", "offset": 4},
                   "offset 4 is past the end of blank.txt: 3 lines", f"a {what} at offset 4")
        self.same(self.ordinary(read, {"path": "empty.txt", "limit": 5},
                                "a read of the empty empty.txt with limit=5"),
                  "", "read of the empty empty.txt with limit=5")

    def test_read_note_counts_blank_lines(self):
        """The note's "of n" counts blank lines too: make_read_tool(ws, max_lines=2) reads "x\\n\\n\\n\\ny\\n\\nz\\n" (7 lines, 4 of them blank) as "x\\n\\n" and "[Showing lines 1-2 of 7. Use offset=3 to continue.]", and offset=5 as "y\\n\\n" and "[Showing lines 5-6 of 7. Use offset=7 to continue.]"."""
        text = "x\n\n\n\ny\n\nz\n"
        ws = lab.Workspace({"gaps.txt": text})
        read = self.tool("make_read_tool(ws, max_lines=2)", self.need("make_read_tool"), ws,
                         max_lines=2)
        what = ("of gaps.txt, \"x\\n\\n\\n\\ny\\n\\nz\\n\", by make_read_tool(ws, max_lines=2) "
                "(the file has 7 lines, 4 of them blank: n in \"of n\" counts every line of "
                "the file, as the offsets do)")
        for arguments, want in (({}, "x\n\n[Showing lines 1-2 of 7. Use offset=3 to continue.]"),
                                ({"offset": 5},
                                 "y\n\n[Showing lines 5-6 of 7. Use offset=7 to continue.]")):
            shown = ", ".join(f"{k}={v}" for k, v in arguments.items()) or "no offset"
            self.same(self.ordinary(read, {"path": "gaps.txt", **arguments},
                                    f"the read with {shown} {what}"),
                      want, f"the read with {shown} {what}")

    def test_read_big_file(self):
        """read of a 5000-line file returns lines 1 to 2000 followed by "[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]", and so does limit=3000, since a limit never lifts the budget; offset=4001 returns the last 1000 lines and no note."""
        ws = lab.Workspace({"big.txt": _numbered(5000)})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        self.same(self.ordinary(read, {"path": "big.txt"}, "read of big.txt"),
                  _numbered(2000) + "[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]",
                  "read of the 5000-line big.txt")
        self.same(self.ordinary(read, {"path": "big.txt", "limit": 3000}, "read of big.txt"),
                  _numbered(2000) + "[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]",
                  "read of the 5000-line big.txt with limit=3000 (the limit picks lines; the "
                  "budget still caps them)")
        self.same(self.ordinary(read, {"path": "big.txt", "offset": 4001}, "read of big.txt"),
                  _numbered(5000, first=4001), "read of big.txt with offset=4001")

    def test_read_byte_budget(self):
        """When bytes run out before lines do, read stops after the last whole line that fits and says where to go on: ten 30-byte lines with max_bytes=100 give lines 1-3 and "Use offset=4"."""
        line = "%-29s\n"
        ws = lab.Workspace({"wide.txt": "".join(line % f"row {k}" for k in range(1, 11))})
        read = self.tool("make_read_tool(ws, max_bytes=100)", self.need("make_read_tool"), ws,
                         max_bytes=100)
        self.same(self.ordinary(read, {"path": "wide.txt"}, "read of wide.txt"),
                  "".join(line % f"row {k}" for k in range(1, 4))
                  + "[Showing lines 1-3 of 10. Use offset=4 to continue.]",
                  "read of wide.txt, ten 30-byte lines, with max_bytes=100")

    def test_read_mistakes(self):
        """A missing file is an error naming the files that are there ("File not found: b.py. Files here: a.py"); offset 0 and limit 0 are errors ("offset and limit must be 1 or more"), an offset of "2" is "offset must be an integer" and a limit of "5" "limit must be an integer", offset 2 of a 2-line file is its last line, and offset 3 is an error: "offset 3 is past the end of a.py: 2 lines"."""
        ws = lab.Workspace({"a.py": "A = 1\nB = 2\n"})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        self.error(read, {"path": "b.py"}, "File not found: b.py. Files here: a.py",
                   "a read of the missing b.py")
        self.error(read, {"path": "a.py", "offset": 0}, "offset and limit must be 1 or more",
                   "a read with offset 0")
        self.error(read, {"path": "a.py", "limit": 0}, "offset and limit must be 1 or more",
                   "a read with limit 0")
        self.error(read, {"path": "a.py", "offset": "2"}, "offset must be an integer",
                   "a read with offset \"2\", a string")
        self.error(read, {"path": "a.py", "limit": "5"}, "limit must be an integer",
                   "a read with limit \"5\", a string (read limit through int_arg too)")
        self.same(self.ordinary(read, {"path": "a.py", "offset": 2}, "read with offset 2"),
                  "B = 2\n", "read of the 2-line a.py with offset=2")
        self.error(read, {"path": "a.py", "offset": 3}, "offset 3 is past the end of a.py: 2 lines",
                   "a read of the 2-line a.py with offset 3")

    def test_read_refuses_below_one(self):
        """Below 1 is below 1, not only 0: offset -1 and limit -1 are errors, "offset and limit must be 1 or more", and not a slice from the end of the file."""
        ws = lab.Workspace({"a.py": "A = 1\nB = 2\nC = 3\n"})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        self.error(read, {"path": "a.py", "offset": -1}, "offset and limit must be 1 or more",
                   "a read with offset -1 (check offset < 1, not offset == 0: Python would "
                   "read -1 as the last line)")
        self.error(read, {"path": "a.py", "limit": -1}, "offset and limit must be 1 or more",
                   "a read with limit -1 (check limit < 1, not limit == 0)")

    def test_read_path_must_be_a_string(self):
        """A path that is not a string is refused, not turned into one: a read with path 42, ["a.py"] or {"name": "a.py"} is the error "path must be a string"."""
        ws = lab.Workspace({"a.py": "A = 1\n", "42": "forty-two\n", "['a.py']": "x\n"})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        for value in (42, ["a.py"], {"name": "a.py"}):
            self.error(read, {"path": value}, "path must be a string",
                       f"a read with path {value!r}, not a string (read it with str_arg, not "
                       "str(): str() would turn any value into some file name)")

    def test_read_keeps_its_own_budget(self):
        """read keeps the budget it was made with: make_read_tool(ws, max_lines=10) reads a 30-line file as lines 1 to 10 and "[Showing lines 1-10 of 30. Use offset=11 to continue.]"."""
        ws = lab.Workspace({"thirty.txt": _numbered(30)})
        read = self.tool("make_read_tool(ws, max_lines=10)", self.need("make_read_tool"), ws,
                         max_lines=10)
        self.same(self.ordinary(read, {"path": "thirty.txt"}, "read of thirty.txt"),
                  _numbered(10) + "[Showing lines 1-10 of 30. Use offset=11 to continue.]",
                  "read of the 30-line thirty.txt by make_read_tool(ws, max_lines=10) (pass the "
                  "tool's own max_lines and max_bytes to truncate_head, not MAX_LINES)")

    def test_read_last_line_without_newline(self):
        """A last line with no newline is a line: in "A = 1\\nB = 2", 2 lines, offset 2 reads "B = 2", offset=1, limit=1 says "of 2. Use offset=2", and offset 3 is past the end, "offset 3 is past the end of a.py: 2 lines"."""
        ws = lab.Workspace({"a.py": "A = 1\nB = 2"})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        what = "of a.py, \"A = 1\\nB = 2\" (count lines with splitlines, not newlines)"
        self.same(self.ordinary(read, {"path": "a.py", "offset": 2}, f"the read with offset 2 {what}"),
                  "B = 2", f"the read with offset 2 {what}")
        self.same(self.ordinary(read, {"path": "a.py", "limit": 1}, f"the read with limit 1 {what}"),
                  "A = 1\n[Showing lines 1-1 of 2. Use offset=2 to continue.]",
                  f"the read with limit 1 {what}")
        self.error(read, {"path": "a.py", "offset": 3}, "offset 3 is past the end of a.py: 2 lines",
                   f"a read with offset 3 {what}")

    def test_read_note_names_what_was_shown(self):
        """When the byte budget cuts inside a limit, the note names the last line shown: ten 30-byte lines, max_bytes=100, offset=2, limit=5 give lines 2-4 and "[Showing lines 2-4 of 10. Use offset=5 to continue.]"."""
        line = "%-29s\n"
        ws = lab.Workspace({"wide.txt": "".join(line % f"row {k}" for k in range(1, 11))})
        read = self.tool("make_read_tool(ws, max_bytes=100)", self.need("make_read_tool"), ws,
                         max_bytes=100)
        self.same(self.ordinary(read, {"path": "wide.txt", "offset": 2, "limit": 5},
                                "read of wide.txt"),
                  "".join(line % f"row {k}" for k in range(2, 5))
                  + "[Showing lines 2-4 of 10. Use offset=5 to continue.]",
                  "read of wide.txt, ten 30-byte lines, max_bytes=100, offset=2, limit=5 (the "
                  "note counts the lines truncate_head kept, not the limit asked for)")

    def test_missing_file_keeps_to_the_budget(self):
        """The list of files in "File not found" keeps to the byte budget, counted as it is sent, names and ", " between them, in UTF-8: in a folder of 30 files, with max_bytes=40, "f01.txt, f02.txt, f03.txt, f04.txt" (34 bytes; a fifth name would make 43) and " and 26 more"; max_bytes=34 keeps those four names (exactly 34 bytes) and max_bytes=33 three; three names of 7 bytes and 6 characters ("é1.txt") with max_bytes=24 give two of them and " and 1 more"."""
        ws = lab.Workspace({f"f{k:02d}.txt": "" for k in range(1, 31)})
        read = self.tool("make_read_tool(ws, max_bytes=40)", self.need("make_read_tool"), ws,
                         max_bytes=40)
        names = ", ".join(f"f{k:02d}.txt" for k in range(1, 5))
        self.error(read, {"path": "g.txt"},
                   f"File not found: g.txt. Files here: {names} and 26 more",
                   "a read of the missing g.txt among 30 files, max_bytes=40 (seven bytes a name "
                   "and two for each \", \" between them: the list as it is sent)")
        for budget, shown in ((34, 4), (33, 3)):
            read = self.tool(f"make_read_tool(ws, max_bytes={budget})", self.need("make_read_tool"),
                             ws, max_bytes=budget)
            names = ", ".join(f"f{k:02d}.txt" for k in range(1, shown + 1))
            self.error(read, {"path": "g.txt"},
                       f"File not found: g.txt. Files here: {names} and {30 - shown} more",
                       f"a read of the missing g.txt among 30 files, max_bytes={budget} (four "
                       "names joined are exactly 34 bytes: a list of 34 bytes fits a budget of "
                       "34, not one of 33)")
        ws = lab.Workspace({f"é{k}.txt": "" for k in range(1, 4)})
        read = self.tool("make_read_tool(ws, max_bytes=24)", self.need("make_read_tool"), ws,
                         max_bytes=24)
        self.error(read, {"path": "g.txt"},
                   "File not found: g.txt. Files here: é1.txt, é2.txt and 1 more",
                   "a read of the missing g.txt among é1.txt, é2.txt and é3.txt, max_bytes=24 "
                   "(each name is 7 bytes of UTF-8 and 6 characters: all three joined are 25 "
                   "bytes, 22 characters; count the bytes)")

    def test_missing_file_names_what_is_there_now(self):
        """The list of files in "File not found" is read at the time of the call: a file written after the tool was made is named ("Files here: a.py, b.py")."""
        ws = lab.Workspace({"a.py": "A = 1\n"})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        ws.write_text("b.py", "B = 2\n")
        self.error(read, {"path": "c.py"}, "File not found: c.py. Files here: a.py, b.py",
                   "a read of the missing c.py after b.py was written (list the folder when "
                   "the call comes, not when the tool is made)")

    def test_missing_file_in_an_empty_folder(self):
        """In a folder with no files, "File not found" says so in words: a read of the missing a.py is the error "File not found: a.py. No files here.", not a list with nothing after "Files here: "."""
        ws = lab.Workspace()
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        self.error(read, {"path": "a.py"}, "File not found: a.py. No files here.",
                   "a read of the missing a.py in a folder with no files (when ws.listdir(\".\") "
                   "is empty, say \"No files here.\" instead of a list)")

    def test_missing_file_when_no_name_fits(self):
        """When not even the first name fits the byte budget, "File not found" gives the count alone: among "alpha_long_name.py" (18 bytes) and "b.py", with max_bytes=10, the error is "File not found: g.py. Files here: 2 (names over the budget)", neither an empty list followed by " and 2 more" nor the first name over the budget."""
        ws = lab.Workspace({"alpha_long_name.py": "", "b.py": ""})
        read = self.tool("make_read_tool(ws, max_bytes=10)", self.need("make_read_tool"), ws,
                         max_bytes=10)
        self.error(read, {"path": "g.py"},
                   "File not found: g.py. Files here: 2 (names over the budget)",
                   "a read of the missing g.py among alpha_long_name.py and b.py, max_bytes=10 "
                   "(the first name alone is 18 bytes: when no name fits, say how many files "
                   "there are and that their names are over the budget)")

    def test_missing_file_names_from_the_first(self):
        """The names in "File not found" are the first ones, in the order ws.listdir(".") gives them, and are not re-sorted to fit more: among "alpha_long_name.py", "b.py" and "c.py", with max_bytes=20, the list is "alpha_long_name.py and 2 more"."""
        ws = lab.Workspace({"alpha_long_name.py": "", "b.py": "", "c.py": ""})
        read = self.tool("make_read_tool(ws, max_bytes=20)", self.need("make_read_tool"), ws,
                         max_bytes=20)
        self.error(read, {"path": "g.py"},
                   "File not found: g.py. Files here: alpha_long_name.py and 2 more",
                   "a read of the missing g.py among alpha_long_name.py, b.py and c.py, "
                   "max_bytes=20 (take the names from the first, in the order ws.listdir(\".\") "
                   "gives them: 18 bytes fit, and \", b.py\" would make 24)")

    def test_read_windows_line_ends(self):
        """read hands each line back as the file holds it, "\\r\\n" and all: "A = 1\\r\\nB = 2\\r\\n" reads back exactly, offset=2 returns "B = 2\\r\\n", and limit=1 returns "A = 1\\r\\n" followed by "[Showing lines 1-1 of 2. Use offset=2 to continue.]"."""
        text = "A = 1\r\nB = 2\r\n"
        ws = lab.Workspace({"a.py": text})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        what = ("of a.py, \"A = 1\\r\\nB = 2\\r\\n\" (keep each line as the file holds it: "
                "do not turn \"\\r\\n\" into \"\\n\")")
        for arguments, want in (({}, text), ({"offset": 2}, "B = 2\r\n"),
                                ({"limit": 1},
                                 "A = 1\r\n[Showing lines 1-1 of 2. Use offset=2 to continue.]")):
            shown = ", ".join(f"{k}={v}" for k, v in arguments.items()) or "no offset or limit"
            got = self.ordinary(read, {"path": "a.py", **arguments}, f"the read with {shown} {what}")
            if got != want:
                self.fail(f"the read with {shown} {what} returned {_clip(got)}, expected "
                          f"{_clip(want)}")

    def test_read_empty_file(self):
        """An empty file reads as "", not as an error, and offset 2 of it is past the end: "offset 2 is past the end of empty.txt: 0 lines"."""
        ws = lab.Workspace({"empty.txt": ""})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        self.same(self.ordinary(read, {"path": "empty.txt"}, "a read of the empty empty.txt"), "",
                  "read of the empty empty.txt")
        self.error(read, {"path": "empty.txt", "offset": 2},
                   "offset 2 is past the end of empty.txt: 0 lines",
                   "a read of the empty empty.txt with offset 2")

    def test_read_line_over_budget(self):
        """A first line over the byte budget is not shown at all, not even part of it: a note gives its size in bytes, and "Use offset=N+1 to skip it." only when a line of the file follows it: line 2 of a.js at offset 2 says "Line 2" and "offset=3", the last line says no offset, and limit=1 does not hide the line after it."""
        ws = lab.Workspace({"min.js": "x" * 300 + "\nnext\n", "one.txt": "é" * 60 + "\n",
                            "a.js": "short\n" + "y" * 200 + "\nend\n",
                            "b.js": "short\n" + "y" * 200 + "\n"})
        read = self.tool("make_read_tool(ws, max_bytes=100)", self.need("make_read_tool"), ws,
                         max_bytes=100)
        self.same(self.ordinary(read, {"path": "min.js"}, "read of min.js"),
                  "[Line 1 of min.js is 301 bytes, over the 100-byte budget of one read, "
                  "so none of it is shown. Use offset=2 to skip it.]",
                  "read of min.js, whose first line is 301 bytes, with max_bytes=100")
        self.same(self.ordinary(read, {"path": "one.txt"}, "read of one.txt"),
                  "[Line 1 of one.txt is 121 bytes, over the 100-byte budget of one read, "
                  "so none of it is shown.]",
                  "read of one.txt, one line of 60 \"é\" (121 bytes, 61 characters), "
                  "with max_bytes=100")
        self.same(self.ordinary(read, {"path": "min.js", "limit": 1}, "read of min.js, limit=1"),
                  "[Line 1 of min.js is 301 bytes, over the 100-byte budget of one read, "
                  "so none of it is shown. Use offset=2 to skip it.]",
                  "read of min.js with limit=1 (line 2 is still in the file, so the note says "
                  "how to skip line 1)")
        self.same(self.ordinary(read, {"path": "a.js", "offset": 2}, "read of a.js, offset=2"),
                  "[Line 2 of a.js is 201 bytes, over the 100-byte budget of one read, "
                  "so none of it is shown. Use offset=3 to skip it.]",
                  "read of a.js at offset=2, whose line 2 is 201 bytes (the note names the line "
                  "that was asked for, and the one after it)")
        self.same(self.ordinary(read, {"path": "b.js", "offset": 2}, "read of b.js, offset=2"),
                  "[Line 2 of b.js is 201 bytes, over the 100-byte budget of one read, "
                  "so none of it is shown.]",
                  "read of b.js at offset=2, whose last line, line 2, is 201 bytes")

    def test_read_exact_fit_has_no_note(self):
        """A file that fits the budget exactly comes back whole with no note: the 3-line, 18-byte a.py read by make_read_tool(ws, max_lines=3) and by make_read_tool(ws, max_bytes=18)."""
        text = "A = 1\nB = 2\nC = 3\n"
        ws = lab.Workspace({"a.py": text})
        for budget in ({"max_lines": 3}, {"max_bytes": 18}):
            (key, value), = budget.items()
            made = f"make_read_tool(ws, {key}={value})"
            read = self.tool(made, self.need("make_read_tool"), ws, **budget)
            self.same(self.ordinary(read, {"path": "a.py"}, f"read of a.py by {made}"), text,
                      f"read of the 3-line, 18-byte a.py by {made} (a budget used up exactly "
                      "has cut nothing: the note is for lines left in the file)")

    def test_read_reads_the_file_now(self):
        """read reads the file when the call comes: after a.py is rewritten, the next read returns the new text, and a file in a folder, "src/app.py", is read like any other."""
        ws = lab.Workspace({"a.py": "A = 1\n", "src/app.py": "run()\n"})
        read = self.tool("make_read_tool(ws)", self.need("make_read_tool"), ws)
        self.ordinary(read, {"path": "a.py"}, "the first read of a.py")
        ws.write_text("a.py", "A = 2\n")
        self.same(self.ordinary(read, {"path": "a.py"}, "a read of a.py after it was rewritten"),
                  "A = 2\n", "a read of a.py after it was rewritten (read the file at each call; "
                  "keep nothing from an earlier one)")
        self.same(self.ordinary(read, {"path": "src/app.py"},
                                "a read of src/app.py (ask ws.exists whether a path is there: "
                                "ws.listdir(\".\") names only what is directly in the folder)"),
                  "run()\n", "a read of src/app.py")

    def test_read_describes_its_budget(self):
        """The read tool is named "read", needs only path, and its description states its budget: make_read_tool(ws, max_lines=10) says "10 lines" and "50000 bytes", and make_read_tool(ws, max_bytes=300) says "300 bytes"."""
        read = self.tool("make_read_tool(ws, max_lines=10)", self.need("make_read_tool"),
                         lab.Workspace(), max_lines=10)
        if (read.get("name"), read.get("parameters", {}).get("required")) != ("read", ["path"]):
            self.fail(f"the tool should be named \"read\" and require [\"path\"]; it is named "
                      f"{_clip(read.get('name'))} and requires "
                      f"{_clip(read.get('parameters', {}).get('required'))}")
        for words in ("10 lines", f"{harness.MAX_BYTES} bytes"):
            if words not in read.get("description", ""):
                self.fail(f"the description should say {words!r}: "
                          f"{_clip(read.get('description'), 200)}")
        read = self.tool("make_read_tool(ws, max_bytes=300)", self.need("make_read_tool"),
                         lab.Workspace(), max_bytes=300)
        if "300 bytes" not in read.get("description", ""):
            self.fail("the description of make_read_tool(ws, max_bytes=300) should say '300 "
                      f"bytes', the tool's own budget: {_clip(read.get('description'), 200)}")


# ----------------------------------------------------------------------------------------- lab 2

class Lab2(_Case):

    def test_tail_whole_lines(self):
        """truncate_tail("a\\nb\\nc\\n", max_lines=2) is ("b\\nc\\n", 2): whole lines from the end, in their order; a text that fits comes back whole, and "" gives ("", 0)."""
        self.cut("truncate_tail", "a\nb\nc\n", ("b\nc\n", 2), max_lines=2)
        self.cut("truncate_tail", "a\nb\n", ("a\nb\n", 2))
        self.cut("truncate_tail", "", ("", 0))

    def test_tail_counts_bytes(self):
        """truncate_tail counts UTF-8 bytes: with max_bytes=5, the last line "éé\\n" (exactly 5 bytes) fits and the line before it does not, and a last line of 7 bytes gives ("", 0)."""
        self.cut("truncate_tail", "x\néé\n", ("éé\n", 1), max_bytes=5)
        self.cut("truncate_tail", "x\nééé\n", ("", 0), max_bytes=5)

    def test_tail_windows_line_ends(self):
        """A "\\r\\n" line end is two bytes, and is kept as it is: truncate_tail("a\\r\\nb\\r\\n", max_bytes=5) is ("b\\r\\n", 1), and max_bytes=6 keeps both lines."""
        self.cut("truncate_tail", "a\r\nb\r\n", ("b\r\n", 1), max_bytes=5)
        self.cut("truncate_tail", "a\r\nb\r\n", ("a\r\nb\r\n", 2), max_bytes=6)

    def test_bash_output(self):
        """bash runs the command and returns what it printed: "echo hello" gives "hello\\n", with is_error False; a call without a command string is the error "command must be a string"."""
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"), lab.Shell(lab.Workspace()))
        self.same(self.ordinary(bash, {"command": "echo hello"}, "echo hello"), "hello\n",
                  "the result of echo hello")
        self.error(bash, {"cmd": "ls"}, "command must be a string",
                   "a bash call that sends cmd instead of command")

    def test_bash_command_must_be_a_string(self):
        """A command that is not a string is refused and never run: 42, ["ls", "-l"] and {"cmd": "ls"} are each the error "command must be a string"."""
        class Counting:
            runs = 0

            def run(self, command):
                Counting.runs += 1
                return "", 0
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"), Counting())
        for value in (42, ["ls", "-l"], {"cmd": "ls"}):
            self.error(bash, {"command": value}, "command must be a string",
                       f"a bash call with command {value!r}, not a string (read it with "
                       "str_arg, not str(): str() would run the text of a Python value)")
        if Counting.runs:
            self.fail(f"bash ran {Counting.runs} command(s) for calls whose command was not a "
                      "string; refuse them before calling shell.run")

    def test_bash_without_a_shell_is_an_error(self):
        """A shell that cannot take the command at all (its run() raises) is the tool failing, not news from a command: the exception goes up and run_tool marks the result, is_error True with the exception's words."""
        class NoShell:
            def run(self, command):
                raise FileNotFoundError("No such file or directory: '/bin/sh'")
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"), NoShell())
        self.error(bash, {"command": "pytest"}, "No such file or directory: '/bin/sh'",
                   "a bash call on a machine with no shell (shell.run raised FileNotFoundError; "
                   "let it go up, so the flag tells the model the tool could not run)")

    def test_bash_failure_is_news(self):
        """A command that fails is an ordinary result, is_error False: "cat missing.txt" comes back with its message, then "\\nCommand exited with code 1", the status on a line of its own."""
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"), lab.Shell(lab.Workspace()))
        content = self.ordinary(bash, {"command": "cat missing.txt"},
                                "cat missing.txt, a command that ran and failed,")
        want = "cat: missing.txt: No such file or directory\n\nCommand exited with code 1"
        self.status_on_its_own_line(content, want, "the result of cat missing.txt")
        self.same(content, want, "the result of cat missing.txt")

    def test_bash_any_exit_code(self):
        """Every exit code but 0 gets its status line: "pytets" ends "Command exited with code 127", and "exit 2", which prints nothing, comes back as "\\nCommand exited with code 2": the status always follows a "\\n", even after empty output."""
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"), lab.Shell(lab.Workspace()))
        content = self.ordinary(bash, {"command": "pytets"}, "pytets, a command not found,")
        if not content.endswith("\nCommand exited with code 127"):
            self.fail(f"the result of pytets ends {_clip(content[-40:])}; expected it to end "
                      "\"\\nCommand exited with code 127\": the status line goes on for every "
                      "exit code that is not 0")
        content = self.ordinary(bash, {"command": "exit 2"}, "exit 2")
        if content == "Command exited with code 2":
            self.fail("the result of exit 2, which printed nothing, is \"Command exited with code "
                      "2\" with no blank line before it; expected \"\\nCommand exited with code "
                      "2\": the status always goes on after a \"\\n\", even when the output is "
                      "empty")
        self.same(content, "\nCommand exited with code 2",
                  "the result of exit 2 (a status line for every code that is not 0)")

    def test_bash_counts_every_line(self):
        """bash counts every line of the output, a last one with no newline too: "cat abc.txt" of "a\\nb\\nc" with max_lines=2 gives "b\\nc", then "[Showing the last 2 of 3 lines. Narrow the command for more.]"; a shell that reports code -9 gets "Command exited with code -9"."""
        bash = self.tool("make_bash_tool(shell, max_lines=2)", self.need("make_bash_tool"),
                         lab.Shell(lab.Workspace({"abc.txt": "a\nb\nc"})), max_lines=2)
        self.same(self.ordinary(bash, {"command": "cat abc.txt"}, "cat abc.txt"),
                  "b\nc\n[Showing the last 2 of 3 lines. Narrow the command for more.]",
                  "the result of cat abc.txt, \"a\\nb\\nc\", with max_lines=2 (count lines with "
                  "splitlines, not newlines)")

        class Killed:
            def run(self, command):
                return "Killed\n", -9
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"), Killed())
        self.same(self.ordinary(bash, {"command": "sleep 99"}, "a command killed by a signal"),
                  "Killed\n\nCommand exited with code -9",
                  "the result of a command the shell reports as code -9 (every code but 0 gets "
                  "its status line)")

    def test_bash_counts_blank_lines(self):
        """Blank lines of output are lines, counted and kept: "cat gaps.txt" of "x\\n\\n\\n\\n" with max_lines=2 gives its last two lines, "\\n\\n", then "\\n[Showing the last 2 of 4 lines. Narrow the command for more.]"."""
        bash = self.tool("make_bash_tool(shell, max_lines=2)", self.need("make_bash_tool"),
                         lab.Shell(lab.Workspace({"gaps.txt": "x\n\n\n\n"})), max_lines=2)
        self.same(self.ordinary(bash, {"command": "cat gaps.txt"}, "cat gaps.txt"),
                  "\n\n\n[Showing the last 2 of 4 lines. Narrow the command for more.]",
                  "the result of cat gaps.txt, \"x\\n\\n\\n\\n\", four lines, three of them "
                  "blank, with max_lines=2 (count the output as it is, blank lines too)")

    def test_bash_runs_once_adds_nothing(self):
        """bash runs its command exactly once, and a command that prints nothing and exits 0 ("exit 0") comes back as "", with nothing added."""
        class Counting:
            runs = 0

            def run(self, command):
                Counting.runs += 1
                return "1\n2\n3\n", 0
        bash = self.tool("make_bash_tool(shell, max_lines=2)", self.need("make_bash_tool"),
                         Counting(), max_lines=2)
        self.ordinary(bash, {"command": "date >> log.txt"}, "a command with a side effect")
        if Counting.runs != 1:
            self.fail(f"bash ran its command {Counting.runs} times for one call; a command may "
                      "change things (append to a file, send a mail), so it runs once, and its "
                      "lines are counted from that one output")
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"), lab.Shell(lab.Workspace()))
        self.same(self.ordinary(bash, {"command": "exit 0"}, "exit 0"), "",
                  "the result of exit 0, which printed nothing and succeeded (nothing to add: "
                  "an empty result is the truth)")

    def test_bash_keeps_the_end(self):
        """"seq 1 5000" comes back as lines 3001 to 5000, then "[Showing the last 2000 of 5000 lines. Narrow the command for more.]"."""
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"), lab.Shell(lab.Workspace()))
        content = self.ordinary(bash, {"command": "seq 1 5000"}, "seq 1 5000")
        self.same(content, "".join(f"{k}\n" for k in range(3001, 5001))
                  + "\n[Showing the last 2000 of 5000 lines. Narrow the command for more.]",
                  "the result of seq 1 5000")

    def test_bash_byte_budget(self):
        """When bytes run out before lines do, bash keeps the last lines that fit: "seq 1 100" with max_bytes=20 gives lines 95 to 100 (19 bytes), then "[Showing the last 6 of 100 lines. Narrow the command for more.]"; by default, 1,500 lines of 40 bytes (60,000 bytes) give the last 1,250."""
        bash = self.tool("make_bash_tool(shell, max_bytes=20)", self.need("make_bash_tool"),
                         lab.Shell(lab.Workspace()), max_bytes=20)
        content = self.ordinary(bash, {"command": "seq 1 100"}, "seq 1 100")
        self.same(content, "".join(f"{k}\n" for k in range(95, 101))
                  + "\n[Showing the last 6 of 100 lines. Narrow the command for more.]",
                  "the result of seq 1 100 with max_bytes=20")
        wide = "".join(f"{k:<39}\n" for k in range(1, 1501))
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"),
                         lab.Shell(lab.Workspace({"wide.txt": wide})))
        content = self.ordinary(bash, {"command": "cat wide.txt"}, "cat wide.txt")
        self.same(content, "".join(f"{k:<39}\n" for k in range(251, 1501))
                  + "\n[Showing the last 1250 of 1500 lines. Narrow the command for more.]",
                  "the result of cat wide.txt, 1,500 lines of 40 bytes, with the default budget")

    def test_bash_exact_fit_and_nothing_fits(self):
        """An output that fits the budget exactly comes back whole with no note ("seq 1 3" with max_lines=3, and with max_bytes=6); a last line over the byte budget leaves nothing, and the note still says so: "echo 0123456789" with max_bytes=10 gives "\\n[Showing the last 0 of 1 lines. Narrow the command for more.]"."""
        for budget in ({"max_lines": 3}, {"max_bytes": 6}):
            (key, value), = budget.items()
            made = f"make_bash_tool(shell, {key}={value})"
            bash = self.tool(made, self.need("make_bash_tool"), lab.Shell(lab.Workspace()), **budget)
            self.same(self.ordinary(bash, {"command": "seq 1 3"}, f"seq 1 3 by {made}"),
                      "1\n2\n3\n", f"the result of seq 1 3, 3 lines and 6 bytes, by {made} (a "
                      "budget used up exactly has cut nothing, so there is no note)")
        made = "make_bash_tool(shell, max_bytes=10)"
        bash = self.tool(made, self.need("make_bash_tool"), lab.Shell(lab.Workspace()),
                         max_bytes=10)
        self.same(self.ordinary(bash, {"command": "echo 0123456789"}, f"echo 0123456789 by {made}"),
                  "\n[Showing the last 0 of 1 lines. Narrow the command for more.]",
                  f"the result of echo 0123456789, one line of 11 bytes, by {made} (nothing fits, "
                  "and an empty result with no note would say the command printed nothing)")

    def test_bash_verdict_comes_last(self):
        """When a long output ends in a failure ("seq 1 5000 && false"), the result still ends with "Command exited with code 1", after the note, and is not an error."""
        bash = self.tool("make_bash_tool(shell)", self.need("make_bash_tool"), lab.Shell(lab.Workspace()))
        content = self.ordinary(bash, {"command": "seq 1 5000 && false"}, "seq 1 5000 && false")
        want = ("".join(f"{k}\n" for k in range(3001, 5001))
                + "\n[Showing the last 2000 of 5000 lines. Narrow the command for more.]"
                + "\nCommand exited with code 1")
        self.status_on_its_own_line(content, want, "the result of seq 1 5000 && false")
        self.same(content, want, "the result of seq 1 5000 && false")

    def test_write_checks_its_arguments(self):
        """A write call with no content is answered "content must be a string", is_error True, and writes nothing; a good one says "Successfully wrote to a.py.", and a second write replaces the file's contents."""
        ws = lab.Workspace()
        write = self.tool("make_write_tool(ws)", self.need("make_write_tool"), ws)
        self.error(write, {"path": "a.py"}, "content must be a string",
                   "a write call with no content")
        if ws.exists("a.py"):
            self.fail("a write call with no content should write nothing, and a.py exists")
        self.same(self.ordinary(write, {"path": "a.py", "content": "A = 1\n"}, "a good write"),
                  "Successfully wrote to a.py.", "the result of a good write")
        self.same(ws.read_text("a.py"), "A = 1\n", "a.py after a good write")
        self.ordinary(write, {"path": "a.py", "content": "B = 2\n"}, "a second write of a.py")
        self.same(ws.read_text("a.py"), "B = 2\n",
                  "a.py after a second write of \"B = 2\\n\" (write replaces the whole file)")

    def test_write_content_must_be_a_string(self):
        """content that is not a string is refused and nothing is written: 42, ["x"] and {"port": 9090} are each the error "content must be a string"."""
        ws = lab.Workspace()
        write = self.tool("make_write_tool(ws)", self.need("make_write_tool"), ws)
        for value in (42, ["x"], {"port": 9090}):
            self.error(write, {"path": "cfg.json", "content": value}, "content must be a string",
                       f"a write call with content {value!r}, not a string (read it with "
                       "str_arg, not str(): str() would write a Python repr into the file)")
            if ws.exists("cfg.json"):
                self.fail(f"a write call with content {value!r} should write nothing, and "
                          "cfg.json exists")

    def test_write_empty_file(self):
        """content "" is a string: writing it makes an empty file, such as an empty __init__.py, and says "Successfully wrote to __init__.py."."""
        ws = lab.Workspace()
        write = self.tool("make_write_tool(ws)", self.need("make_write_tool"), ws)
        self.same(self.ordinary(write, {"path": "__init__.py", "content": ""},
                                "a write of an empty __init__.py"),
                  "Successfully wrote to __init__.py.", "the result of writing \"\" to __init__.py")
        if not ws.exists("__init__.py") or ws.read_text("__init__.py") != "":
            self.fail("a write of \"\" to __init__.py should leave an empty __init__.py")

    def test_write_checks_its_path(self):
        """A write call with no path is answered "path must be a string", is_error True, and writes nothing."""
        ws = lab.Workspace()
        write = self.tool("make_write_tool(ws)", self.need("make_write_tool"), ws)
        self.error(write, {"content": "A = 1\n"}, "path must be a string",
                   "a write call with no path (read it with str_arg too)")
        if ws.listdir("."):
            self.fail(f"a write call with no path should write nothing; the folder holds "
                      f"{ws.listdir('.')}")

    def test_write_path_must_be_a_string(self):
        """A path that is not a string is refused, not turned into a file name, and nothing is written: a write with path 42, ["a.py"] or {"name": "a.py"} is the error "path must be a string"."""
        ws = lab.Workspace()
        write = self.tool("make_write_tool(ws)", self.need("make_write_tool"), ws)
        for value in (42, ["a.py"], {"name": "a.py"}):
            self.error(write, {"path": value, "content": "A = 1\n"}, "path must be a string",
                       f"a write call with path {value!r}, not a string (read it with str_arg, "
                       "not str(): str() would turn any value into some file name)")
            if ws.listdir("."):
                self.fail(f"a write call with path {value!r} should write nothing; the folder "
                          f"holds {ws.listdir('.')}")

    def test_bash_describes_its_budget(self):
        """The bash tool is named "bash", needs command, and its description states its budget: make_bash_tool(shell, max_lines=7) says "7 lines", and make_bash_tool(shell, max_bytes=300) says "300 bytes"."""
        bash = self.tool("make_bash_tool(shell, max_lines=7)", self.need("make_bash_tool"),
                         lab.Shell(lab.Workspace()), max_lines=7)
        if (bash.get("name"), bash.get("parameters", {}).get("required")) != ("bash", ["command"]):
            self.fail(f"the tool should be named \"bash\" and require [\"command\"]; it is named "
                      f"{_clip(bash.get('name'))} and requires "
                      f"{_clip(bash.get('parameters', {}).get('required'))}")
        if "7 lines" not in bash.get("description", ""):
            self.fail(f"the description should say '7 lines': {_clip(bash.get('description'), 200)}")
        bash = self.tool("make_bash_tool(shell, max_bytes=300)", self.need("make_bash_tool"),
                         lab.Shell(lab.Workspace()), max_bytes=300)
        if "300 bytes" not in bash.get("description", ""):
            self.fail("the description of make_bash_tool(shell, max_bytes=300) should say '300 "
                      f"bytes', the tool's own budget: {_clip(bash.get('description'), 200)}")


    def test_tail_budget_is_exact(self):
        """truncate_tail keeps an exact fit: with max_bytes=5, "ab\\ncd\\n" (6 bytes) gives ("cd\\n", 1), and with max_bytes=6, exactly its size, the whole of it."""
        self.cut("truncate_tail", "ab\ncd\n", ("cd\n", 1), max_bytes=5)
        self.cut("truncate_tail", "ab\ncd\n", ("ab\ncd\n", 2), max_bytes=6)


if __name__ == "__main__":
    unittest.main()
