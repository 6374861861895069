# Wrong design: the error names the JSON parser's line number, which counts lines inside the one
# line it was handed (always 1 here), not the file's.
class SessionLog(SessionLog):
    def entries(self):
        text = self.ws.read_text(self.path) if self.ws.exists(self.path) else ""
        entries = []
        for line in text.splitlines():
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(
                    f"{self.path}, line {error.lineno}: not a complete log entry") from None
        return entries
