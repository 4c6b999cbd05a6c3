"""Unit tests of proxy.py against a small upstream HTTP server: a request
passes through untouched; each fault window does what it names, seen from the
client (status, reset) and from the upstream (applied or not)."""

import http.client
import http.server
import json
import os
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proxy  # noqa: E402


class Upstream(http.server.BaseHTTPRequestHandler):
    applied = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Upstream.applied.append((self.path, body))
        out = json.dumps({"seen": body.decode()}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


class ProxyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
        threading.Thread(target=cls.upstream.serve_forever, daemon=True).start()
        cls.dir = tempfile.mkdtemp()
        cls.control = os.path.join(cls.dir, "control")
        cls.log = os.path.join(cls.dir, "proxy.log")
        port_file = os.path.join(cls.dir, "port")
        p = proxy.Proxy(cls.upstream.server_address[1], cls.control, cls.log)
        threading.Thread(target=p.run, args=(port_file,), daemon=True).start()
        while not os.path.exists(port_file):
            time.sleep(0.01)
        with open(port_file) as f:
            cls.port = int(f.read())

    def setUp(self):
        Upstream.applied.clear()
        self.open_window(None)

    def open_window(self, fault, **extra):
        with open(self.control, "w") as f:
            json.dump({"fault": fault, "until": time.time() + 60, **extra} if fault else {}, f)

    def post(self, body="x"):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("POST", "/v1/api/steps/l_1/complete", body=body,
                  headers={"Authorization": "Bearer secret", "Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read()

    def test_a_request_passes_through(self):
        self.assertEqual(self.post("hello"), (200, b'{"seen": "hello"}'))
        self.assertEqual(Upstream.applied, [("/v1/api/steps/l_1/complete", b"hello")])

    def test_lost_reply_is_applied_upstream_but_never_answered(self):
        self.open_window("lose_reply")
        with self.assertRaises((ConnectionError, http.client.HTTPException)):
            self.post("once")
        self.assertEqual(Upstream.applied, [("/v1/api/steps/l_1/complete", b"once")])

    def test_reset_is_not_forwarded(self):
        self.open_window("reset")
        with self.assertRaises((ConnectionError, http.client.HTTPException)):
            self.post()
        self.assertEqual(Upstream.applied, [])

    def test_503_burst_answers_without_forwarding(self):
        self.open_window("503")
        status, body = self.post()
        self.assertEqual(status, 503)
        self.assertIn(b"unavailable", body)
        self.assertEqual(Upstream.applied, [])

    def test_stall_holds_then_forwards(self):
        self.open_window("stall", stall_s=0.2)
        self.assertEqual(self.post("late")[0], 200)
        self.assertEqual(len(Upstream.applied), 1)

    def test_a_closed_window_is_no_fault(self):
        with open(self.control, "w") as f:
            json.dump({"fault": "reset", "until": time.time() - 1}, f)
        self.assertEqual(self.post()[0], 200)

    def test_the_log_names_the_fault_and_never_the_token(self):
        self.open_window("503")
        self.post()
        with open(self.log) as f:
            text = f.read()
        self.assertIn("503 POST /v1/api/steps/l_1/complete", text)
        self.assertNotIn("secret", text)


if __name__ == "__main__":
    unittest.main()
