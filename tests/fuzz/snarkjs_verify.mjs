// snarkjs's groth16.verify over a batch of cases in one node process (the CLI
// would pay ~0.7 s of start-up per case).
//
//   node tests/fuzz/snarkjs_verify.mjs CASES.jsonl > RESULTS.jsonl
//
// Each input line is {"vk": B64, "public": B64, "proof": B64}: the files' bytes,
// read as UTF-8 and parsed with JSON.parse as `snarkjs groth16 verify` does.
// Each output line is {"r": "valid" | "invalid" | "error", "msg": ...}, in order.
import { readFileSync } from "node:fs";
import { groth16 } from "snarkjs";

const lines = readFileSync(process.argv[2], "utf8").split("\n").filter((l) => l.length > 0);
const out = [];
for (const line of lines) {
  const c = JSON.parse(line);
  const text = (k) => Buffer.from(c[k], "base64").toString("utf8");
  let res;
  try {
    const ok = await groth16.verify(JSON.parse(text("vk")), JSON.parse(text("public")), JSON.parse(text("proof")));
    res = { r: ok === true ? "valid" : "invalid" };
  } catch (e) {
    res = { r: "error", msg: String(e && e.message ? e.message : e).slice(0, 200) };
  }
  out.push(JSON.stringify(res));
}
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
// ffjavascript keeps worker threads alive: leave explicitly.
process.exit(0);
