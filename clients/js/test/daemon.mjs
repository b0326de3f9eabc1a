// Real snarkd daemons for the tests: `snarkd start` on a free loopback port with a config in a temp
// directory and copies of the bundled example circuits; `stop()` ends it (and kills it if it must).
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const EXAMPLES = join(REPO, "examples");
// The Python that has snarkd installed: CI's activated venv (`python`), or SNARKD_PYTHON.
export const PYTHON = process.env.SNARKD_PYTHON || "python";

function env() {
  const e = { ...process.env };
  e.PYTHONPATH = [join(REPO, "src"), ...(e.PYTHONPATH ? e.PYTHONPATH.split(delimiter) : [])].join(delimiter);
  for (const k of Object.keys(e)) {  // no setting overridden from outside (the caches are speed only)
    if (k.startsWith("SNARKD_") && !["SNARKD_WASM_CACHE", "SNARKD_GPU_CUBIN_DIR", "SNARKD_PYTHON"].includes(k)) delete e[k];
  }
  delete e.NOTIFY_SOCKET;
  return e;
}

export function python(args, opts = {}) {
  return run(PYTHON, args, { env: env(), timeout: 180_000, maxBuffer: 16 << 20, ...opts });
}

export function snarkd(...args) {
  return python(["-m", "snarkd", ...args]);
}

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

export function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A temp directory with copies of examples/chain-bn128 and chain-bls12381 (the daemon writes each
 * circuit's recorded witness program beside its .wasm: not into the repository). */
export function workDir(name) {
  const dir = mkdtempSync(join(tmpdir(), `snarkd-js-${name}-`));
  for (const c of ["chain-bn128", "chain-bls12381"]) cpSync(join(EXAMPLES, c), join(dir, c), { recursive: true });
  return dir;
}

/**
 * Start a daemon. daemonToml: more lines for [daemon] (TLS, tokens); extraToml: more sections.
 * preload: key id -> .zkey path; port: a free one when absent; synthesisToml: the [synthesis] lines
 * (tests: one worker, one thread). Returns { addr, pid, dir, config, log(), stop() }.
 */
export async function startDaemon({ dir, preload = {}, daemonToml = "", extraToml = "", port,
                                    synthesisToml = "workers = 1\nthreads = 1" } = {}) {
  port ??= await freePort();
  const addr = `127.0.0.1:${port}`;
  const config = join(dir, "snarkd.toml");
  const lines = [
    "[daemon]", `listen = "${addr}"`, `pid_file = "${join(dir, "run", "snarkd.pid")}"`,
    `log_file = "${join(dir, "snarkd.log")}"`, 'drain_timeout = "5s"', daemonToml,
    "[transport]", `witness_spool = "${join(dir, "spool")}"`,
    "[synthesis]", synthesisToml,
    "[keys.preload]", ...Object.entries(preload).map(([k, v]) => `${k} = "${v}"`),
    extraToml,
  ];
  writeFileSync(config, lines.join("\n") + "\n");
  let out;
  try {
    out = await snarkd("start", "--config", config);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${PYTHON} -m snarkd start failed (SNARKD_PYTHON names the Python that has snarkd): ` +
      `${err.stdout}\n${err.stderr}`);
  }
  const m = /snarkd started: pid (\d+), listening on ([^,]+),/.exec(out.stdout);
  if (!m) throw new Error(`no 'snarkd started' line in: ${out.stdout}`);
  const pid = Number(m[1]);
  return {
    addr, pid, dir, config,
    log: () => (existsSync(join(dir, "snarkd.log")) ? readFileSync(join(dir, "snarkd.log"), "utf8") : ""),
    async stop() {
      try {
        await snarkd("stop", "--config", config);
      } finally {
        if (pidAlive(pid)) process.kill(pid, "SIGKILL");
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
