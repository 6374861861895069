"""Lesson 06's lab tests: the budget.

Lab1 checks truncate_head and the read tool (point 6.1). Lab2 checks truncate_tail, the bash tool
and the write tool reading its arguments through str_arg (point 6.2). Every tool result stays
within MAX_LINES lines and MAX_BYTES bytes, and says how to get the rest. Each test's docstring is
its checklist line on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 6 tests.py [--lab 1|2]
"""
import unittest

import harness
import lab

LESSON = 6


def _numbered(n):
    return "".join(f"line {k}\n" for k in range(1, n + 1))


def _result(tool, arguments):
    """The toolResult of one call of `tool`, run as the loop runs it."""
    return harness.run_tool([tool], lab.call(tool["name"], arguments, id="c1"))


class Lab1(unittest.TestCase):

    def test_head_whole_lines(self):
        """truncate_head("a\\nb\\nc\\n", max_lines=2) is ("a\\nb\\n", 2): whole lines from the start, newlines kept; a text that fits comes back whole."""
        self.assertEqual(harness.truncate_head("a\nb\nc\n", max_lines=2), ("a\nb\n", 2))
        self.assertEqual(harness.truncate_head("a\nb\nc", max_lines=5), ("a\nb\nc", 3))
        self.assertEqual(harness.truncate_head(""), ("", 0))

    def test_head_counts_bytes(self):
        """truncate_head counts UTF-8 bytes, not characters: with max_bytes=5, "éé\\n" (5 bytes) fits, and "ééé\\n" (7 bytes) gives ("", 0)."""
        self.assertEqual(harness.truncate_head("éé\nx\n", max_bytes=5), ("éé\n", 1))
        self.assertEqual(harness.truncate_head("ééé\nx\n", max_bytes=5), ("", 0))

    def test_head_stops_at_the_first_misfit(self):
        """truncate_head stops at the first line that does not fit, even when a shorter line after it would."""
        text = "short\n" + "x" * 40 + "\nok\n"
        self.assertEqual(harness.truncate_head(text, max_bytes=20), ("short\n", 1))

    def test_read_small_file(self):
        """read of a small file returns all of it, exactly, and offset=2, limit=1 returns only line 2, followed by "[Showing lines 2-2 of 3. Use offset=3 to continue.]"."""
        ws = lab.Workspace({"a.py": "A = 1\nB = 2\nC = 3\n"})
        read = harness.make_read_tool(ws)
        self.assertEqual(_result(read, {"path": "a.py"})["content"], "A = 1\nB = 2\nC = 3\n")
        self.assertEqual(_result(read, {"path": "a.py", "offset": 2, "limit": 1})["content"],
                         "B = 2\n[Showing lines 2-2 of 3. Use offset=3 to continue.]")

    def test_read_big_file(self):
        """read of a 5000-line file returns lines 1 to 2000 ending "[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]", and offset=4001 returns the last 1000 lines and no note."""
        ws = lab.Workspace({"big.txt": _numbered(5000)})
        read = harness.make_read_tool(ws)
        first = _result(read, {"path": "big.txt"})["content"]
        self.assertTrue(first.startswith("line 1\n") and "line 2000\n" in first
                        and "line 2001\n" not in first, "the first read should hold lines 1-2000")
        self.assertTrue(first.endswith("[Showing lines 1-2000 of 5000. Use offset=2001 to "
                                       "continue.]"), first[-80:])
        last = _result(read, {"path": "big.txt", "offset": 4001})["content"]
        self.assertEqual(last, "".join(f"line {k}\n" for k in range(4001, 5001)))

    def test_read_mistakes(self):
        """A missing file is an error naming the files that are there ("File not found: b.py. Files here: a.py"), and offset 0 or an offset past the end is an error too."""
        ws = lab.Workspace({"a.py": "A = 1\n"})
        read = harness.make_read_tool(ws)
        missing = _result(read, {"path": "b.py"})
        self.assertEqual((missing["content"], missing["is_error"]),
                         ("File not found: b.py. Files here: a.py", True))
        zero = _result(read, {"path": "a.py", "offset": 0})
        self.assertEqual(zero["content"], "offset and limit must be 1 or more")
        past = _result(read, {"path": "a.py", "offset": 3})
        self.assertEqual((past["content"], past["is_error"]),
                         ("offset 3 is past the end of a.py: 1 lines", True))

    def test_read_line_over_budget(self):
        """A file whose first line alone is over the byte budget returns none of that line, only a note giving its size and offset=2 to skip it."""
        ws = lab.Workspace({"min.js": "x" * 300 + "\nnext\n"})
        read = harness.make_read_tool(ws, max_bytes=100)
        self.assertEqual(_result(read, {"path": "min.js"})["content"],
                         "[Line 1 of min.js is 301 bytes, over the 100-byte budget of one read, "
                         "so none of it is shown. Use offset=2 to skip it.]")

    def test_read_describes_its_budget(self):
        """The read tool is named "read", needs only path, and its description states its budget: make_read_tool(ws, max_lines=10) says 10 lines."""
        read = harness.make_read_tool(lab.Workspace(), max_lines=10)
        self.assertEqual(read["name"], "read")
        self.assertEqual(read["parameters"]["required"], ["path"])
        self.assertIn("10 lines", read["description"])
        self.assertIn(f"{harness.MAX_BYTES} bytes", read["description"])


class Lab2(unittest.TestCase):

    def test_tail_whole_lines(self):
        """truncate_tail("a\\nb\\nc\\n", max_lines=2) is ("b\\nc\\n", 2): whole lines from the end, in their order."""
        self.assertEqual(harness.truncate_tail("a\nb\nc\n", max_lines=2), ("b\nc\n", 2))
        self.assertEqual(harness.truncate_tail("a\nb\n"), ("a\nb\n", 2))

    def test_tail_counts_bytes(self):
        """truncate_tail counts UTF-8 bytes: with max_bytes=5, the last line "éé\\n" fits and the line before it does not."""
        self.assertEqual(harness.truncate_tail("x\néé\n", max_bytes=5), ("éé\n", 1))
        self.assertEqual(harness.truncate_tail("x\nééé\n", max_bytes=5), ("", 0))

    def test_bash_output(self):
        """bash runs the command and returns what it printed: "echo hello" gives "hello\\n", with is_error False."""
        bash = harness.make_bash_tool(lab.Shell(lab.Workspace()))
        result = _result(bash, {"command": "echo hello"})
        self.assertEqual((result["content"], result["is_error"]), ("hello\n", False))

    def test_bash_failure_is_news(self):
        """A command that fails is an ordinary result: "cat missing.txt" comes back with its message, then "Command exited with code 1", and is_error False."""
        bash = harness.make_bash_tool(lab.Shell(lab.Workspace()))
        result = _result(bash, {"command": "cat missing.txt"})
        self.assertEqual(result["content"], "cat: missing.txt: No such file or directory\n"
                                            "\nCommand exited with code 1")
        self.assertFalse(result["is_error"], "the command ran: its failure is its output")

    def test_bash_keeps_the_end(self):
        """"seq 1 5000" comes back as lines 3001 to 5000, then "[Showing the last 2000 of 5000 lines. Narrow the command for more.]"."""
        bash = harness.make_bash_tool(lab.Shell(lab.Workspace()))
        content = _result(bash, {"command": "seq 1 5000"})["content"]
        self.assertEqual(content, "".join(f"{k}\n" for k in range(3001, 5001))
                         + "\n[Showing the last 2000 of 5000 lines. Narrow the command for more.]")

    def test_write_checks_its_arguments(self):
        """A write call with no content is answered "content must be a string", is_error True, and writes nothing; a good one says "Successfully wrote to a.py."."""
        ws = lab.Workspace()
        write = harness.make_write_tool(ws)
        bad = _result(write, {"path": "a.py"})
        self.assertEqual((bad["content"], bad["is_error"]), ("content must be a string", True))
        self.assertFalse(ws.exists("a.py"))
        good = _result(write, {"path": "a.py", "content": "A = 1\n"})
        self.assertEqual(good["content"], "Successfully wrote to a.py.")
        self.assertEqual(ws.read_text("a.py"), "A = 1\n")

    def test_bash_describes_its_budget(self):
        """The bash tool is named "bash", needs command, and its description states its budget: make_bash_tool(shell, max_lines=7) says 7 lines."""
        bash = harness.make_bash_tool(lab.Shell(lab.Workspace()), max_lines=7)
        self.assertEqual((bash["name"], bash["parameters"]["required"]), ("bash", ["command"]))
        self.assertIn("7 lines", bash["description"])


if __name__ == "__main__":
    unittest.main()
