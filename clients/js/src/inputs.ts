// Circuit inputs checked before they are sent, by the rules `snarkd witness` applies (src/snarkd/witness/
// inputs.py) that need no circuit: an object of signals; values integers (BigInt, a safe-integer number, a
// decimal string with optional sign, or 0x/0o/0b digits, as snarkjs's BigInt(v) takes them); nested arrays
// for signal arrays, objects for bus fields. Signal names, sizes and the field's range need the circuit:
// the daemon checks those, naming the signal. Like the daemon, a message names the signal, never the
// value: circuit inputs are often secrets.
import { InputError } from "./errors.js";

/** One input value as snarkjs accepts it. */
export type SignalValue = bigint | number | string | boolean;
/** Input signals: values, arrays of them (signal arrays) or objects (bus fields). */
export type CircuitInputs = { [signal: string]: SignalValue | CircuitInputs | InputArray };
export interface InputArray extends Array<SignalValue | CircuitInputs | InputArray> {}

export const MAX_INPUT_DEPTH = 64;  // the daemon's [limits] max_inputs_depth default
const MAX_DIGITS = 4000;            // decimal digits: far above any field element (78 for BN254's r)
const DECIMAL = /^[+-]?[0-9]+$/;
const PREFIXED = /^0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)$/;

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

function checkValue(v: unknown, where: string): void {
  const bad = (why: string) => new InputError(`input '${where}': ${why}`, -1, `input '${where}': ${why}`, where);
  switch (typeof v) {
    case "bigint":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(v)) throw bad("not an integer: a number that is not finite");
      if (!Number.isInteger(v)) throw bad("not an integer: a number that has a fraction");
      if (!Number.isSafeInteger(v)) {
        throw bad("a number beyond 2^53 has lost digits already: give it as a string or a BigInt");
      }
      return;
    case "string": {
      const s = v.trim();
      if (DECIMAL.test(s)) {
        if (s.replace(/^[+-]/, "").replace(/^0+/, "").length > MAX_DIGITS) {
          throw bad(`a decimal string of ${s.length} digits: larger than any field element`);
        }
        return;
      }
      if (PREFIXED.test(s)) return;
      throw bad("not an integer: a string that is not decimal or 0x/0o/0b digits");
    }
    default:
      throw bad(`not an integer: ${kindOf(v)}`);
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** Throws InputError naming the signal when `inputs` cannot be a circuit's inputs. */
export function checkInputs(inputs: unknown, what = "the inputs"): asserts inputs is CircuitInputs {
  if (!isPlainObject(inputs)) {
    throw new InputError(`${what} must be an object mapping signal names to values, not ${kindOf(inputs)}`);
  }
  // Iterative walk: a hostile nesting depth must meet our limit, not the JS stack's.
  const stack: Array<[unknown, string, number]> = Object.entries(inputs).map(([k, v]) => [v, k, 1]);
  while (stack.length > 0) {
    const [value, where, depth] = stack.pop()!;
    if (Array.isArray(value) || isPlainObject(value)) {
      if (depth > MAX_INPUT_DEPTH) {
        throw new InputError(`input '${where}': arrays or objects nest more than ${MAX_INPUT_DEPTH} deep`,
          -1, undefined, where);
      }
      if (Array.isArray(value)) {
        const objects = value.filter(isPlainObject).length;
        if (objects > 0 && objects !== value.length && value.every((x) => !Array.isArray(x))) {
          throw new InputError(`input '${where}': an array mixes objects (bus values) with plain values`,
            -1, undefined, where);
        }
        value.forEach((x, i) => stack.push([x, `${where}[${i}]`, depth + 1]));
      } else {
        for (const [k, x] of Object.entries(value)) stack.push([x, `${where}.${k}`, depth + 1]);
      }
    } else {
      checkValue(value, where);
    }
  }
}

/** The inputs as the daemon's inputs_json: BigInts as decimal strings (JSON has no BigInt). */
export function inputsJson(inputs: unknown, what = "the inputs"): string {
  checkInputs(inputs, what);
  return JSON.stringify(inputs, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
}
