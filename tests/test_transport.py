"""The given urllib_transport (lesson 16.4): a body cut off mid-chunk is a broken connection,
ConnectionError (an OSError), never http.client.IncompleteRead, so the adapters' "never an
exception" holds for the dropped stream it usually is over HTTP/1.1."""
import importlib.util
import socket
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _harness(tmp_path):
    source = subprocess.run([sys.executable, str(ROOT / "harness_py" / "stages.py"), "solution",
                             "16.4"], capture_output=True, text=True, check=True).stdout
    path = tmp_path / "harness_163.py"
    path.write_text(source)
    sys.path.insert(0, str(ROOT / "harness_py"))
    spec = importlib.util.spec_from_file_location("harness_163", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cut_server():
    """A server that sends one SSE event in a chunk, then half of the next chunk, and closes."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)

    def serve():
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            client.recv(65536)
            body = b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
            client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(body) + body
                           + b"\r\n" + b"40\r\ndata: {\"cho")
            client.close()
    threading.Thread(target=serve, daemon=True).start()
    return server


def test_a_cut_body_is_a_connection_error(tmp_path):
    h = _harness(tmp_path)
    server = _cut_server()
    try:
        url = f"http://127.0.0.1:{server.getsockname()[1]}/v1/chat/completions"
        status, _, chunks = h.urllib_transport("POST", url, {}, b"{}", timeout=5)
        assert status == 200
        got, error = [], None
        try:
            for chunk in chunks:
                got.append(chunk)
        except Exception as caught:
            error = caught
        assert b"".join(got).startswith(b"data:")
        assert isinstance(error, ConnectionError), repr(error)

        model = h.OpenAIModel("x", base_url=url.rsplit("/chat", 1)[0],
                              environ={"OPENAI_API_KEY": "k"}, sleep=lambda s: None)
        events = list(model.stream("", [h.user_message("hi")], []))
        assert events[0] == {"type": "text", "text": "Hel"}
        assert events[-1]["type"] == "error"
        reply = model.complete("", [h.user_message("hi")], [])
        assert reply["role"] == "assistant"
    finally:
        server.close()
