"""deploy/: the alerting rules pass `promtool check rules` and their unit tests, and every expression of
the Grafana dashboard and of the rules returns series from a real Prometheus scraping a running daemon
after a short bench (Debian's `prometheus` package; .ci/run installs it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from daemon_helpers import free_port, snarkd, start_daemon

from snarkd.bench import run_bench

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "snarkd.json"
RULES = DEPLOY / "prometheus" / "rules.yml"
# Grafana's variables, as the test's Prometheus sees them: the window spans the bench
GRAFANA_VARS = {"$__rate_interval": "30s", "$job": "snarkd", "$instance": ".*"}
# metrics with samples only on some machines: the query must be valid; series wherever the daemon has samples
SOMETIMES = ("snarkd_device_kernel_busy_seconds",)  # kernel time is measured on GPUs only (CUDA events)
COMPARISON = re.compile(r"^(?P<lhs>.+)\s(?P<op>==|!=|>=|<=|>|<)\s(?P<rhs>-?[0-9.]+(?:e-?[0-9]+)?)$", re.S)


pytestmark = pytest.mark.slow  # a real Prometheus: the slow tier (pytest -m "not slow" leaves it out)


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed: .ci/run installs Debian's prometheus package")
        pytest.skip(f"{name} is not installed (apt-get install prometheus)")
    return path


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def dashboard_exprs() -> list[str]:
    out = []

    def walk(panels):
        for p in panels:
            out.extend(t["expr"] for t in p.get("targets", ()) if t.get("expr"))
            walk(p.get("panels", ()))

    walk(json.loads(DASHBOARD.read_text())["panels"])
    for name, value in GRAFANA_VARS.items():
        out = [e.replace(name, value) for e in out]
    assert not [e for e in out if "$" in e], "a Grafana variable the test does not substitute"
    return out


def test_promtool_checks_the_rules_and_their_unit_tests():
    promtool = tool("promtool")
    r = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([promtool, "test", "rules", "rules.test.yml"], capture_output=True, text=True, timeout=60,
                       cwd=RULES.parent)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


def test_every_dashboard_and_rule_expression_returns_series(setup, reaper, chain_bn128, tmp_path):
    prometheus = tool("prometheus")
    circ, wtns = chain_bn128
    status_port, prom_port = free_port(), free_port()
    cfg = setup.write(workers=2, preload={"chain": circ.zkey},
                      extra='[keys]\nmax_resident = 4\nhost_budget = "64MiB"\ndevice_budget = "1GiB"\n')
    cfg.write_text(cfg.read_text().replace("[daemon]\n", f'[daemon]\nstatus_listen = "127.0.0.1:{status_port}"\n'))
    start_daemon(cfg, reaper)

    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{json.dumps(str(RULES))}]\n"
        "scrape_configs:\n"
        f"  - {{job_name: snarkd, static_configs: [{{targets: ['127.0.0.1:{status_port}']}}]}}\n")
    log = open(tmp_path / "prometheus.log", "wb")
    proc = subprocess.Popen([prometheus, f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    reaper.procs.append(proc)
    base = f"http://127.0.0.1:{prom_port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()
            try:
                if urllib.request.urlopen(f"{base}/-/ready", timeout=2).status == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "prometheus not ready after 60s"
            time.sleep(0.2)

        # a short bench: proofs completing over several scrapes
        t0, proofs = time.monotonic(), 0
        while time.monotonic() - t0 < 6:
            res = run_bench(setup.addr, "chain", witness=wtns.read_bytes(), count=8, inflight=2, progress=False)
            assert res["summary"]["failed"] == 0, res["summary"]
            proofs += 8
        time.sleep(3)  # scrapes and rule evaluations after the last proofs

        targets = get(f"{base}/api/v1/targets")["data"]["activeTargets"]
        assert [t["health"] for t in targets] == ["up"], targets
        with urllib.request.urlopen(f"http://127.0.0.1:{status_port}/metrics", timeout=10) as resp:
            exported = resp.read().decode()

        def query(expr: str) -> list:
            body = get(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
            assert body["status"] == "success", (expr, body)
            return body["data"]["result"]

        empty = []
        for expr in dashboard_exprs():
            if not query(expr) and not any(m in expr and not re.search(rf"^{m}_total{{", exported, re.M)
                                           for m in SOMETIMES):
                empty.append(expr)
        groups = get(f"{base}/api/v1/rules")["data"]["groups"]
        rules = [rule for g in groups for rule in g["rules"]]
        assert len(rules) == 23
        for rule in rules:
            assert rule["health"] == "ok" and not rule.get("lastError"), rule
            if rule["type"] == "recording":
                for expr in (rule["query"], rule["name"]):  # the expression, and the series it recorded
                    if not query(expr):
                        empty.append(expr)
            else:
                m = COMPARISON.match(rule["query"])
                assert m, f"alert {rule['name']}: not 'EXPR OP NUMBER': {rule['query']}"
                for expr in (m["lhs"], f"{m['lhs']} {m['op']} bool {m['rhs']}"):
                    if not query(expr):
                        empty.append(expr)
        assert not empty, "expressions without series:\n" + "\n".join(empty)

        # and the numbers are the bench's: proofs completed, a latency, every alert quiet
        done = query('snarkd_proofs_completed_total{job="snarkd"}')
        assert float(done[0]["value"][1]) == proofs
        p50 = query(next(e for e in dashboard_exprs() if e.startswith("histogram_quantile(0.5,")))
        assert 0 < float(p50[0]["value"][1]) < 60
        firing = [a for a in get(f"{base}/api/v1/alerts")["data"]["alerts"] if a["state"] == "firing"]
        assert not firing, firing
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
        snarkd("stop", "--config", cfg)
