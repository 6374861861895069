# Wrong design: every message rewrites the whole file. The file holds the same lines on a good
# day, but a power cut during a rewrite takes every message, not just the last.
class SessionLog(SessionLog):
    def append_message(self, message):
        entries = self.entries()
        entry = {"id": f"e{len(entries) + 1}", "type": "message", "message": message}
        self.ws.write_text(self.path, "".join(json.dumps(e) + "\n" for e in entries + [entry]))
        return entry["id"]
