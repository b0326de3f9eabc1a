// snarkjs, the judge: every proof the daemon returns is checked by snarkjs.groth16.verify against the
// example's vk.json, and snarkjs's own fullProve gives the publicSignals the daemon's must equal.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as snarkjs from "snarkjs";

const vks = new Map();

export function vk(circuitDir) {
  if (!vks.has(circuitDir)) vks.set(circuitDir, JSON.parse(readFileSync(join(circuitDir, "vk.json"), "utf8")));
  return vks.get(circuitDir);
}

export function verify(circuitDir, proof, publicSignals) {
  return snarkjs.groth16.verify(vk(circuitDir), publicSignals, proof);
}

export function snarkjsFullProve(circuitDir, input) {
  return snarkjs.groth16.fullProve(input, join(circuitDir, "chain.wasm"), join(circuitDir, "chain.zkey"));
}

export function snarkjsWtns(circuitDir, input) {
  const out = { type: "mem" };
  return snarkjs.wtns.calculate(input, join(circuitDir, "chain.wasm"), out).then(() => out.data);
}

/** snarkjs keeps its curves (and their worker threads) alive: end them so the test process can exit. */
export async function endCurves() {
  for (const name of ["curve_bn128", "curve_bls12381"]) {
    if (globalThis[name]) {
      await globalThis[name].terminate();
      delete globalThis[name];
    }
  }
}
