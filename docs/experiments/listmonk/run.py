#!/usr/bin/env python3
"""sendonce and listmonk side by side: the same stock durable PostgreSQL, the same
SMTP sink, the same recipients and body, the same number of SMTP connections,
runs alternating, each product a fresh process per run.

Usage (from the repository, after `make harness build`):

    LISTMONK_DIR=/path/to/listmonk docs/experiments/listmonk/run.py [RECIPIENTS [PAIRS [CONNS]]]

LISTMONK_DIR is a checkout of knadh/listmonk at the tag to compare (v6.2.0) with its
binary built there (`go build -o listmonk ./cmd`, and an empty frontend/dist: the
admin UI is not needed). The project ships none of it: this is a measurement only.

Per run it prints, for each product: messages per second from the sink's first
accepted message to its last (polled every 50 ms), the time from the start request
to the first message, the product's own CPU and the PostgreSQL cluster's CPU per
1,000 messages (from /proc, so no sampling), the product's peak resident memory,
and the machine's load. Defaults: 20,000 recipients, 3 pairs, 20 connections.
listmonk: app.concurrency = CONNS, app.message_rate = 2 × RECIPIENTS ÷ CONNS (no
worker ever sleeps, and the channels it sizes from it stay small), SMTP max_conns =
CONNS. sendonce: SENDONCE_SMTP_CONNS = SENDONCE_WORKERS = CONNS, defaults otherwise.
Both send the same ~3 KB HTML body, HTML only, in a template that adds nothing.
"""
import json
import os
import pwd
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SENDONCE = os.path.join(REPO, "bin", "sendonce")
HARNESS = os.path.join(REPO, "bin", "sendonce-harness")
LISTMONK_DIR = os.environ.get("LISTMONK_DIR", "")
RECIPIENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
PAIRS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
CONNS = int(sys.argv[3]) if len(sys.argv) > 3 else 20
PGPORT, SINK, STATS, LMPORT, SOPORT = 5510, 2525, 2626, 9010, 8090
TCK = os.sysconf("SC_CLK_TCK")
# STATEMENTS=1: load pg_stat_statements and print each product's costliest statements
# after the runs (it costs a little on every statement, so not for the figures).
STATEMENTS = os.environ.get("STATEMENTS") == "1"
PGOPTS = " -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all" if STATEMENTS else ""

PARAGRAPH = ("<p>Our spring collection is here: light jackets, linen shirts and the walking shoes you asked "
             "for. Free delivery on every order this week, and returns are free for thirty days.</p>\n")
BODY = "<html><body><h1>Spring is here</h1>\n" + PARAGRAPH * 14 + "</body></html>"


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({p.returncode}): {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


def as_postgres(cmd):
    if os.geteuid() == 0:
        return ["su", "postgres", "-c", " ".join(cmd)]
    return cmd


def pgbin(name):
    for d in sorted(os.listdir("/usr/lib/postgresql"), reverse=True):
        p = os.path.join("/usr/lib/postgresql", d, "bin", name)
        if os.path.exists(p):
            return p
    return shutil.which(name)


def psql(db, sql):
    return run(["psql", "-h", "127.0.0.1", "-p", str(PGPORT), "-U", "postgres", "-d", db,
                "-v", "ON_ERROR_STOP=1", "-Atqc", sql]).strip()


def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu(pid, children=False):
    f = stat(pid)
    t = int(f[11]) + int(f[12])  # utime, stime
    if children:
        t += int(f[13]) + int(f[14])  # cutime, cstime: children waited for
    return t / TCK


def cluster_cpu(postmaster):
    """The cluster's CPU so far: the postmaster with its reaped children, and the
    live ones (each backend counts once: live in utime, exited in cutime)."""
    total = cpu(postmaster, children=True)
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            f = stat(int(p))
            if int(f[1]) == postmaster:
                total += (int(f[11]) + int(f[12])) / TCK
        except (FileNotFoundError, ProcessLookupError, IndexError):
            pass
    return total


def rss_peak_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0


def sink_accepted():
    with urllib.request.urlopen(f"http://127.0.0.1:{STATS}/stats", timeout=2) as r:
        return json.load(r)["accepted"]


def wait_http(url, secs=30):
    end = time.time() + secs
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except Exception:
            time.sleep(0.05)
    raise SystemExit(f"{url} did not answer in {secs}s")


def api(method, url, key, body=None, ctype="application/json"):
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", "Bearer " + key)
    req.add_header("Content-Type", ctype)
    req.add_header("Idempotency-Key", secrets.token_hex(8))
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)


def measure(start, proc_pid, postmaster):
    """Starts the send with start(), waits until the sink accepted RECIPIENTS
    messages, and returns the figures."""
    pg0, app0 = cluster_cpu(postmaster), cpu(proc_pid)
    load = os.getloadavg()[0]
    t0 = time.time()
    start()
    first = last = None
    while True:
        n = sink_accepted()
        now = time.time()
        if n > 0 and first is None:
            first = now
        if n >= RECIPIENTS:
            last = now
            break
        if now - t0 > 600:
            raise SystemExit(f"only {n} of {RECIPIENTS} messages in 600 s")
        time.sleep(0.05)
    pg, app = cluster_cpu(postmaster) - pg0, cpu(proc_pid) - app0
    return {"rate": (RECIPIENTS - 1) / (last - first), "start_s": first - t0,
            "app_cpu_1k": app / RECIPIENTS * 1000, "pg_cpu_1k": pg / RECIPIENTS * 1000,
            "rss_mb": rss_peak_mb(proc_pid), "load": load}


def start_sink():
    return subprocess.Popen([HARNESS, "sink", "smtp", "--addr", f"127.0.0.1:{SINK}", "--stats-addr", f"127.0.0.1:{STATS}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def setup_listmonk(work):
    cfg = os.path.join(work, "listmonk.toml")
    with open(cfg, "w") as f:
        f.write(f"""[app]
address = "127.0.0.1:{LMPORT}"
[db]
host = "127.0.0.1"
port = {PGPORT}
user = "postgres"
password = ""
database = "listmonk"
ssl_mode = "disable"
max_open = 25
max_idle = 25
max_lifetime = "300s"
""")
    env = dict(os.environ, LISTMONK_ADMIN_USER="admin", LISTMONK_ADMIN_PASSWORD="benchmark-password")
    run([os.path.join(LISTMONK_DIR, "listmonk"), "--install", "--yes", "--config", cfg], cwd=LISTMONK_DIR, env=env)
    smtp = [{"enabled": True, "host": "127.0.0.1", "port": SINK, "auth_protocol": "none", "username": "",
             "password": "", "hello_hostname": "", "max_conns": CONNS, "idle_timeout": "15s", "wait_timeout": "5s",
             "max_msg_retries": 2, "msg_retry_delay": "10ms", "tls_type": "none", "tls_skip_verify": False,
             "email_headers": [], "from_addresses": []}]
    psql("listmonk", f"""
UPDATE settings SET value = '{CONNS}' WHERE key = 'app.concurrency';
UPDATE settings SET value = '{2 * RECIPIENTS // CONNS}' WHERE key = 'app.message_rate';
UPDATE settings SET value = '{json.dumps(smtp)}' WHERE key = 'smtp';
INSERT INTO templates (name, type, subject, body, is_default)
VALUES ('bench', 'campaign', '', '{{{{ template "content" . }}}}', false);
INSERT INTO lists (uuid, name, type, optin) VALUES (gen_random_uuid(), 'bench', 'private', 'single');
INSERT INTO subscribers (uuid, email, name, status)
SELECT gen_random_uuid(), 'r' || g || '@example.com', 'R ' || g, 'enabled' FROM generate_series(1, {RECIPIENTS}) g;
INSERT INTO subscriber_lists (subscriber_id, list_id, status)
SELECT s.id, (SELECT id FROM lists WHERE name = 'bench'), 'confirmed' FROM subscribers s
WHERE s.email LIKE 'r%@example.com';""")
    psql("listmonk", "VACUUM ANALYZE")
    return cfg


def listmonk_run(cfg, postmaster, n):
    psql("listmonk", f"""
INSERT INTO campaigns (uuid, name, subject, from_email, body, content_type, messenger, template_id, status)
VALUES (gen_random_uuid(), 'bench {n}', 'Spring is here', 'News <news@example.com>', $body${BODY}$body$, 'html', 'email',
        (SELECT id FROM templates WHERE name = 'bench'), 'draft');
INSERT INTO campaign_lists (campaign_id, list_id, list_name)
SELECT (SELECT max(id) FROM campaigns), id, name FROM lists WHERE name = 'bench';""")
    sink = start_sink()
    wait_http(f"http://127.0.0.1:{STATS}/stats")
    lm = subprocess.Popen([os.path.join(LISTMONK_DIR, "listmonk"), "--config", cfg], cwd=LISTMONK_DIR,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{LMPORT}/health")
        time.sleep(1)
        # Started as its API's status change does: listmonk finds a running
        # campaign on its next scan.
        return measure(lambda: psql("listmonk", "UPDATE campaigns SET status = 'running' WHERE id = (SELECT max(id) FROM campaigns)"),
                       lm.pid, postmaster)
    finally:
        stop(lm)
        stop(sink)


def sendonce_env(url):
    return dict(os.environ, SENDONCE_DATABASE_URL=url, SENDONCE_ADDR=f"127.0.0.1:{SOPORT}", SENDONCE_PROVIDER="smtp",
                SENDONCE_SMTP_HOST="127.0.0.1", SENDONCE_SMTP_PORT=str(SINK), SENDONCE_SMTP_SECURITY="none",
                SENDONCE_SMTP_CONNS=str(CONNS), SENDONCE_WORKERS=str(CONNS), SENDONCE_LOG_LEVEL="warn",
                SENDONCE_UNSUBSCRIBE_SECRET="bench:" + secrets.token_hex(16))


def setup_sendonce(url):
    env = sendonce_env(url)
    run([SENDONCE, "migrate"], env=env)
    out = run([SENDONCE, "account", "create", "bench"], env=env)
    key = next(l.split("=", 1)[1] for l in out.split() if l.startswith("SENDONCE_API_KEY="))
    srv = subprocess.Popen([SENDONCE, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{SOPORT}/healthz")
        base = f"http://127.0.0.1:{SOPORT}"
        lst = api("POST", base + "/v1/lists", key, {"name": "bench"})
        csv = "email,name\n" + "".join(f"r{g}@example.com,R {g}\n" for g in range(1, RECIPIENTS + 1))
        api("POST", f"{base}/v1/subscribers/import?status=confirmed&list_id={lst['id']}", key, csv.encode(), "text/csv")
    finally:
        stop(srv)
    return key, lst["id"]


def sendonce_run(url, key, list_id, postmaster, n):
    sink = start_sink()
    wait_http(f"http://127.0.0.1:{STATS}/stats")
    srv = subprocess.Popen([SENDONCE, "serve"], env=sendonce_env(url), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{SOPORT}"
        wait_http(base + "/healthz")
        c = api("POST", base + "/v1/campaigns", key, {"name": f"bench {n}", "subject": "Spring is here",
                                                      "from_email": "news@example.com", "from_name": "News",
                                                      "html_template": BODY, "list_ids": [list_id]})
        time.sleep(1)
        return measure(lambda: api("POST", f"{base}/v1/campaigns/{c['id']}/approve", key, {}), srv.pid, postmaster)
    finally:
        stop(srv)
        stop(sink)


def main():
    if not os.path.exists(os.path.join(LISTMONK_DIR, "listmonk")):
        raise SystemExit("set LISTMONK_DIR to a listmonk checkout with its binary built (see the top of this file)")
    work = tempfile.mkdtemp(prefix="sendonce-listmonk-")
    os.chmod(work, 0o755)
    data = os.path.join(work, "pg")
    os.mkdir(data)
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        os.chown(data, pw.pw_uid, pw.pw_gid)
    run(as_postgres([pgbin("initdb"), "-D", data, "-A", "trust", "-U", "postgres"]))
    run(as_postgres([pgbin("pg_ctl"), "-D", data, "-l", os.path.join(data, "log"), "-w", "-o",
                     f"'-p {PGPORT} -c max_connections=200 -c unix_socket_directories={data}{PGOPTS}'", "start"]))
    try:
        with open(os.path.join(data, "postmaster.pid")) as f:
            postmaster = int(f.readline())
        psql("postgres", "CREATE DATABASE listmonk")
        psql("postgres", "CREATE DATABASE sendonce")
        if STATEMENTS:
            for db in ("listmonk", "sendonce"):
                psql(db, "CREATE EXTENSION pg_stat_statements")
        url = f"postgres://postgres@127.0.0.1:{PGPORT}/sendonce?sslmode=disable"
        cfg = setup_listmonk(work)
        key, list_id = setup_sendonce(url)
        if STATEMENTS:
            psql("sendonce", "SELECT pg_stat_statements_reset()")
        print(f"# {RECIPIENTS} recipients, {CONNS} connections, {PAIRS} pairs; {os.cpu_count()} CPUs; "
              f"sendonce {run([SENDONCE, 'version']).split()[1]}, listmonk {run(['git', '-C', LISTMONK_DIR, 'describe', '--tags']).strip()}")
        results = {"listmonk": [], "sendonce": []}
        for n in range(PAIRS):
            order = ["listmonk", "sendonce"] if n % 2 == 0 else ["sendonce", "listmonk"]
            for name in order:
                r = listmonk_run(cfg, postmaster, n) if name == "listmonk" else sendonce_run(url, key, list_id, postmaster, n)
                results[name].append(r)
                print(f"{name:9} run {n + 1}: {r['rate']:7.0f} msg/s, first message after {r['start_s']:.2f} s, "
                      f"CPU-s per 1,000 app {r['app_cpu_1k']:.3f} + PostgreSQL {r['pg_cpu_1k']:.3f} = "
                      f"{r['app_cpu_1k'] + r['pg_cpu_1k']:.3f}, peak RSS {r['rss_mb']:.0f} MB, load {r['load']:.2f}",
                      flush=True)
        if STATEMENTS:
            for db in ("listmonk", "sendonce"):
                print(f"# {db}: statements by total time (ms), calls, rows, time per call")
                print(psql(db, """SELECT round(s.total_exec_time)::text || ' ms, ' || s.calls || ' calls, ' || s.rows || ' rows, '
                                         || round((s.total_exec_time / s.calls)::numeric, 3) || ' ms/call: '
                                         || left(regexp_replace(s.query, '\\s+', ' ', 'g'), 90)
                                  FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                                  WHERE d.datname = current_database()
                                  ORDER BY s.total_exec_time DESC LIMIT 15"""))
        med = {k: {f: statistics.median(r[f] for r in v) for f in v[0]} for k, v in results.items()}
        for k, m in med.items():
            print(f"median {k:9} {m['rate']:7.0f} msg/s, CPU-s per 1,000 {m['app_cpu_1k'] + m['pg_cpu_1k']:.3f} "
                  f"(app {m['app_cpu_1k']:.3f} + PostgreSQL {m['pg_cpu_1k']:.3f}), peak RSS {m['rss_mb']:.0f} MB")
        s, l = med["sendonce"], med["listmonk"]
        print(f"sendonce / listmonk: rate {s['rate'] / l['rate']:.2f}x, CPU per message "
              f"{(s['app_cpu_1k'] + s['pg_cpu_1k']) / (l['app_cpu_1k'] + l['pg_cpu_1k']):.2f}x")
    finally:
        subprocess.run(as_postgres([pgbin("pg_ctl"), "-D", data, "-m", "fast", "stop"]), capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
