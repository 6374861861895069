"""The welcome page's preview: a session with the harness of lesson 11, cut by a power failure and
resumed. Run against lesson 11's reference harness by tests/test_welcome_preview.py, which holds the
page's text to what this prints. Not on the page itself: it would answer lesson 11's questions."""
import harness, lab

FILES = {"a.py": "A = 1\n", "b.py": "B = 2\n", "c.py": "C = 3\n", "d.py": "D = 4\n"}


def writer(request):
    """A scripted model: it writes the next file its transcript does not show as written."""
    done = [block["arguments"]["path"]
            for m in request.messages if m["role"] == "assistant"
            for block in m["content"] if block["type"] == "toolCall"]
    todo = [path for path in FILES if path not in done]
    if not todo:
        return lab.say("Done: " + ", ".join(done) + ".")
    arguments = {"path": todo[0], "content": FILES[todo[0]]}
    return lab.reply(lab.call("write", arguments, id=f"w{len(done) + 1}"))


def session(disk, model):
    """The finished harness: its transcript replayed from a log on the disk, saved as it grows."""
    log = harness.SessionLog(disk, "session.jsonl")
    h = harness.Harness(model, harness.SYSTEM, [harness.make_write_tool(disk)],
                        messages=log.replay())
    h.subscribe(harness.persist_to(log))
    return h


disk = lab.Workspace()
h = session(disk, lab.ScriptedModel([writer, writer, lab.power_cut()]))
print("> Write a.py, b.py, c.py and d.py.")
try:
    lab.drive(h.prompt("Write a.py, b.py, c.py and d.py."))
except lab.PowerCut as cut:
    print("!", cut)
print("  on the disk:", ", ".join(disk.listdir()))

disk = disk.reboot()
model = lab.ScriptedModel([lab.forever(writer)])
h = session(disk, model)
print("-- reboot: the program starts again, knowing only what is on the disk --")
print("> The power went out. Carry on.")
screen = harness.FinalTextRenderer()
for event in h.prompt("The power went out. Carry on."):
    screen.render(event)
screen.finish()
print("  on the disk:", ", ".join(disk.listdir()))
print("  model calls after the reboot:", len(model.calls))
