"""One chaos campaign on the dev cluster: the coordinator, allocations of
scimesh-launch (sbatch), the workload's runs and the fault schedule; then the
history is collected and checked. Used by tests/chaos/run."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import faults
import history
import workload


class Campaign:
    def __init__(self, args, bins):
        self.args = args
        self.work = os.path.abspath(args.work)
        self.coordinator_bin, self.launch_bin, self.native_bin = bins["coordinator"], bins["launch"], bins["native"]
        self.step_script = bins["step"]
        self.coordinator = None
        self.proxy = None
        self.store = None
        self.port = 0
        self.baseline = None
        self.submitted = []
        self.stop_s = (args.ttl_ms + args.grace_ms) / 1000 + 3
        self.t0 = time.monotonic()
        self.logf = None
        self.runs = []
        self.defs = workload.definitions(self.native_bin, self.step_script)

    def say(self, line):
        print(line, flush=True)
        if self.logf is not None:
            self.logf.write(line + "\n")
            self.logf.flush()

    # --- the coordinator ---
    def setup(self):
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.logf = open(os.path.join(self.work, "campaign.log"), "w")
        keys = os.path.join(self.work, "keys")
        for name, scope in (("worker", "worker"), ("exec", "execute")):
            workflows = ["--workflows", "*"] if scope == "worker" else []
            subprocess.run([self.coordinator_bin, "keys", "add", name, "--scope", scope, *workflows, "--keys", keys,
                            "--secret-out", os.path.join(self.work, name + ".token")],
                           check=True, capture_output=True)
        with open(os.path.join(self.work, "exec.token")) as f:
            self.exec_token = f.read().strip()
        with open(os.path.join(self.work, "defs.json"), "w") as f:
            json.dump({"workflows": self.defs}, f, indent=1)
        # The artifact store on a small tmpfs, so that it can be filled.
        self.store = os.path.join(self.work, "store")
        os.makedirs(self.store)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % self.args.store_mb, "tmpfs", self.store], check=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.start_proxy()
        self.start_coordinator()

    def start_proxy(self):
        port_file = os.path.join(self.work, "proxy.port")
        self.proxy_control = os.path.join(self.work, "proxy.control")
        self.proxy = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "proxy.py"),
                                       str(self.port), port_file, self.proxy_control,
                                       os.path.join(self.work, "proxy.log")])
        for _ in range(100):
            if os.path.exists(port_file):
                break
            time.sleep(0.1)
        with open(port_file) as f:
            self.proxy_url = "http://127.0.0.1:%s" % f.read().strip()

    def teardown(self):
        for p in (self.coordinator, self.proxy):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait()
        self.coordinator = None
        subprocess.run(["umount", self.store], capture_output=True)

    def start_coordinator(self):
        a = self.args
        port_file = os.path.join(self.work, "port")
        if os.path.exists(port_file):
            os.unlink(port_file)
        log = open(os.path.join(self.work, "coordinator.log"), "a")
        self.coordinator = subprocess.Popen(
            [self.coordinator_bin, "serve", "--db", os.path.join(self.work, "coordinator.db"),
             "--listen", "127.0.0.1:%d" % self.port, "--port-file", port_file,
             "--keys", os.path.join(self.work, "keys"), "--artifact-dir", self.store,
             "--public-url", self.proxy_url, "--lease-ttl-ms", str(a.ttl_ms),
             "--heartbeat-ms", str(a.ttl_ms // 3), "--grace-ms", str(a.grace_ms),
             "--retry-base-ms", "200", "--retry-cap-ms", "2000"],
            stdout=log, stderr=subprocess.STDOUT)
        for _ in range(300):
            if os.path.exists(port_file) and os.path.getsize(port_file):
                break
            if self.coordinator.poll() is not None:
                raise RuntimeError("the coordinator exited at start")
            time.sleep(0.1)
        self.url = "http://127.0.0.1:%d" % self.port
        self.baseline = history.resource_counts(self.coordinator.pid)

    def api(self, method, path, body=None):
        req = urllib.request.Request(self.url + "/v1/api" + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": "Bearer " + self.exec_token,
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, {}
        except (urllib.error.URLError, OSError):
            return 0, {}

    # --- allocations ---
    def submit(self):
        n = len(self.submitted)
        name = "chaos-%d" % n
        events = os.path.join(self.work, name + ".events.jsonl")
        cmd = ("exec '%s' --definitions '%s/defs.json' --spool '%s/spool' --events '%s' --url '%s'"
               " --wait-ms 1000 --kill-grace 2 --drain-margin 5 --drain-grace 5 --idle-exit 15 --spank=%s"
               % (self.launch_bin, self.work, self.work, events, self.proxy_url,
                  "no" if self.args.plain else "yes"))
        env = dict(os.environ, SCIMESH_TOKEN_FILE=os.path.join(self.work, "worker.token"))
        out = subprocess.run(["sbatch", "--parsable", "-N2", "--ntasks-per-node=%d" % self.args.cpus_per_allocation,
                              "-t", str(self.args.allocation_minutes), "-J", name,
                              "-o", os.path.join(self.work, name + ".log"), "--wrap", cmd],
                             capture_output=True, text=True, env=env)
        job = out.stdout.strip().split(";")[0]
        if not job:
            # No allocation, no campaign: say why (say, no SLURM_CONF: run
            # `eval "$(scripts/dev-cluster env)"` first) instead of waiting.
            raise RuntimeError("sbatch failed (exit %d): %s" % (out.returncode, out.stderr.strip()[-300:]))
        self.submitted.append(job)
        self.say("allocation %s: job %s" % (name, job))

    def jobs(self):
        if not self.submitted:
            return []
        out = subprocess.run(["squeue", "-h", "-o", "%i %T", "-j", ",".join(self.submitted)],
                             capture_output=True, text=True).stdout
        return [l.split()[0] for l in out.splitlines() if l.split()[1] in ("RUNNING", "PENDING", "CONFIGURING")]

    def job_steps(self):
        if not self.submitted:
            return []
        out = subprocess.run(["squeue", "-h", "-s", "-o", "%i", "-j", ",".join(self.submitted)],
                             capture_output=True, text=True).stdout
        return [s for s in out.split() if s.split(".")[-1].isdigit()]

    def two_node_steps(self):
        if not self.submitted:
            return []
        out = subprocess.run(["squeue", "-h", "-s", "-o", "%i %N", "-j", ",".join(self.submitted)],
                             capture_output=True, text=True).stdout
        return [l.split()[0] for l in out.splitlines()
                if len(l.split()) == 2 and l.split()[0].split(".")[-1].isdigit() and l.split()[1] == "n[1-2]"]

    def launcher_pids(self):
        out = []
        for pid, _, args in faults._procs(["--events " + self.work + "/"]):
            if os.path.basename(args.split()[0]) == "scimesh-launch":
                out.append((pid, args.split("--events ")[1].split(".events")[0].rsplit("-", 1)[-1]))
        return out

    # --- the campaign ---
    def start_run(self, wf, inp, patience_s=120):
        """POST /runs (404 until a launcher has registered the workflow; 0
        while the coordinator is down): retried for `patience_s`."""
        deadline = time.monotonic() + patience_s
        while True:
            code, body = self.api("POST", "/runs", {"workflow": wf, "input": inp})
            if code == 201:
                self.runs.append(body["run_id"])
                return
            if time.monotonic() > deadline:
                raise RuntimeError("run of %s not started (HTTP %d)" % (wf, code))
            time.sleep(0.3)

    def unfinished(self):
        import sqlite3
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(self.work, "coordinator.db"), uri=True, timeout=10)
        try:
            return db.execute("SELECT count(*) FROM runs WHERE status = 'running'").fetchone()[0]
        finally:
            db.close()

    def elapsed(self):
        return time.monotonic() - self.t0
