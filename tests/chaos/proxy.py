#!/usr/bin/env python3
"""The chaos campaign's fault proxy: an HTTP/1.1 proxy between the workers
(launchers, ranks, artifact fetches) and the coordinator. One request per
client connection, forwarded on a fresh upstream connection. While a fault
window is open (the driver writes it to the control file), each request is
hit as the window says:
  lose_reply  forwarded and applied upstream, then the client's connection is
              reset instead of answered (the reply lost after the apply)
  reset       the client's connection is reset before anything is forwarded
  stall       held for `stall_s` seconds, then forwarded
  503         answered 503 with Retry-After: 1, not forwarded
Each hit is logged (time, fault, method, path; never a header: they carry
the token). Usage: proxy.py UPSTREAM_PORT PORT_FILE CONTROL_FILE LOG_FILE"""

import json
import os
import socket
import struct
import sys
import threading
import time

MAX_HEAD = 65536


def read_head(sock, buf=b""):
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        buf += chunk
        if len(buf) > MAX_HEAD:
            return None, b""
    head, _, rest = buf.partition(b"\r\n\r\n")
    return head, rest


def header(head, name):
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == name:
            return v.strip().decode(errors="replace")
    return None


def read_body(sock, head, rest):
    n = int(header(head, b"content-length") or 0)
    while len(rest) < n:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return rest[:n]


def reset(sock):
    # SO_LINGER 0: close() sends RST, as a connection reset by a network fault.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class Proxy:
    def __init__(self, upstream_port, control, log):
        self.upstream_port = upstream_port
        self.control = control
        self.log = open(log, "a")
        self.lock = threading.Lock()

    def window(self):
        try:
            with open(self.control) as f:
                w = json.load(f)
        except (OSError, ValueError):
            return None
        return w if w.get("until", 0) > time.time() else None

    def note(self, fault, method, path):
        with self.lock:
            self.log.write("%.3f %s %s %s\n" % (time.time(), fault, method, path.split("?")[0]))
            self.log.flush()

    def forward(self, head, body):
        """The upstream's whole response, or None when it cannot be reached."""
        lines = [l for l in head.split(b"\r\n") if not l.lower().startswith((b"connection:", b"expect:"))]
        up = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=60)
        try:
            up.sendall(b"\r\n".join(lines + [b"Connection: close"]) + b"\r\n\r\n" + body)
            rhead, rest = read_head(up)
            if rhead is None:
                return None
            if header(rhead, b"content-length") is not None:
                rbody = read_body(up, rhead, rest)
            else:
                rbody = rest
                while True:
                    chunk = up.recv(65536)
                    if not chunk:
                        break
                    rbody += chunk
            return rhead + b"\r\n\r\n" + rbody
        finally:
            up.close()

    def serve(self, client):
        try:
            client.settimeout(60)
            head, rest = read_head(client)
            if head is None:
                client.close()
                return
            if (header(head, b"expect") or "").lower() == "100-continue":
                client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = read_body(client, head, rest)
            method, path = (head.split(b"\r\n")[0].decode(errors="replace").split(" ") + ["", ""])[:2]
            w = self.window()
            fault = w["fault"] if w else None
            if fault == "reset":
                self.note(fault, method, path)
                return reset(client)
            if fault == "503":
                self.note(fault, method, path)
                msg = b'{"error":"unavailable","message":"chaos proxy: 503 burst"}'
                client.sendall(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\n"
                               b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(msg), msg))
                return client.close()
            if fault == "stall":
                self.note(fault, method, path)
                time.sleep(w["stall_s"])
            try:
                response = self.forward(head, body)
            except OSError:
                response = None
            if response is None or fault == "lose_reply":
                if fault == "lose_reply" and response is not None:
                    self.note(fault, method, path)
                return reset(client)
            client.sendall(response)
            client.close()
        except OSError:
            client.close()

    def run(self, port_file):
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", 0))
        srv.listen(512)
        tmp = port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(srv.getsockname()[1]))
        os.rename(tmp, port_file)
        while True:
            client, _ = srv.accept()
            threading.Thread(target=self.serve, args=(client,), daemon=True).start()


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    Proxy(int(sys.argv[1]), sys.argv[3], sys.argv[4]).run(sys.argv[2])
