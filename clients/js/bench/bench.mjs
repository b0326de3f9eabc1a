// Proofs per second through the client (fullProve on a snarkd daemon: the witness computed and the proof
// made there) against snarkjs.groth16.fullProve in this process, on the same machine, both warm.
//
//   node bench/bench.mjs [--circuit DIR] [-j 1,16] [-n 16] [--address HOST:PORT --key ID]
//
// DIR holds NAME.wasm, NAME.zkey and input.json (default: examples/chain-bn128); without --address the
// bench starts a daemon on a free loopback port with that key (default [synthesis] settings: all cores)
// and stops it after. SNARKD_PYTHON: the Python that has snarkd (default `python`). JSON on stdout.
import { cpus, loadavg } from "node:os";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { connect } from "../dist/esm/index.js";
import { EXAMPLES, startDaemon } from "../test/daemon.mjs";

const { values: args } = parseArgs({
  options: {
    circuit: { type: "string", default: join(EXAMPLES, "chain-bn128") },
    j: { type: "string", short: "j", default: "1,16" },
    n: { type: "string", short: "n", default: "32" },
    address: { type: "string" },
    key: { type: "string", default: "bench" },
    "skip-snarkjs": { type: "boolean", default: false },
  },
});

const dir = resolve(args.circuit);
const file = (ext) => {
  const f = readdirSync(dir).find((x) => x.endsWith(ext));
  if (!f) throw new Error(`${dir}: no *${ext}`);
  return join(dir, f);
};
const wasm = file(".wasm");
const zkey = file(".zkey");
const input = JSON.parse(readFileSync(join(dir, "input.json"), "utf8"));
const concurrencies = args.j.split(",").map(Number);
const n = Number(args.n);

/** n calls of prove(), j at a time: proofs/s and the latency's median, in ms. */
async function measure(prove, j) {
  await prove();  // warm: keys, witness programs, JIT, curves
  const latencies = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: j }, async () => {
    while (next++ < n) {
      const t = performance.now();
      await prove();
      latencies.push(performance.now() - t);
    }
  }));
  const wall = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  return { j, n, wall_s: wall / 1000, proofs_per_s: n / (wall / 1000), median_ms: latencies[latencies.length >> 1] };
}

let daemon;
const result = { circuit: dir, loadavg_at_start: loadavg(), cores: cpus().length, cpu: cpus()[0]?.model, node: process.version, client: [], snarkjs: [] };
try {
  let address = args.address;
  if (!address) {
    const work = mkdtempSync(join(tmpdir(), "snarkd-js-bench-"));
    daemon = await startDaemon({ dir: work, preload: { [args.key]: zkey }, synthesisToml: "" });
    address = daemon.addr;
  }
  const sd = await connect({ address });
  for (const j of concurrencies) result.client.push(await measure(() => sd.groth16.fullProve(input, args.key), j));
  result.daemon_status = await sd.status();  // its devices and backend: what the client's figures were made on
  sd.close();
  if (!args["skip-snarkjs"]) {  // imported only here: --skip-snarkjs runs where only the client's own dependencies are
    const snarkjs = await import("snarkjs");
    for (const j of concurrencies) result.snarkjs.push(await measure(() => snarkjs.groth16.fullProve(input, wasm, zkey), j));
  }
} finally {
  await daemon?.stop();
  if (!args["skip-snarkjs"]) await (await import("../test/oracle.mjs")).endCurves();
}
for (const [i, c] of result.client.entries()) {
  const s = result.snarkjs[i];
  if (s) c.speedup_vs_snarkjs = c.proofs_per_s / s.proofs_per_s;
}
console.log(JSON.stringify(result, null, 1));
