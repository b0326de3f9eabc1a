// The mapping from gRPC failures to the typed errors, and the field a message names (no daemon needed).
import assert from "node:assert/strict";
import { test } from "node:test";
import { status } from "@grpc/grpc-js";
import * as api from "../dist/esm/index.js";
import { fieldOf, fromGrpc } from "../dist/esm/errors.js";
import { checkInputs, inputsJson } from "../dist/esm/inputs.js";

test("each gRPC code becomes its class, keeping the code, its name and the daemon's message", () => {
  const expected = {
    INVALID_ARGUMENT: api.InputError, ALREADY_EXISTS: api.InputError, FAILED_PRECONDITION: api.InputError,
    RESOURCE_EXHAUSTED: api.InputError, NOT_FOUND: api.NotFoundError, UNAUTHENTICATED: api.AuthenticationError,
    PERMISSION_DENIED: api.PermissionError, UNAVAILABLE: api.UnavailableError, DEADLINE_EXCEEDED: api.DeadlineError,
    CANCELLED: api.CancelledError, ABORTED: api.CancelledError, INTERNAL: api.InternalError, UNKNOWN: api.InternalError,
  };
  for (const [name, cls] of Object.entries(expected)) {
    const e = fromGrpc({ code: status[name], details: `why ${name}` }, "127.0.0.1:1", 50);
    assert.ok(e instanceof cls && e instanceof api.SnarkdError, name);
    assert.equal(e.code, status[name]);
    assert.equal(e.codeName, name);
    assert.equal(e.details, `why ${name}`);
    assert.match(e.message, new RegExp(`why ${name}`));
  }
});

test("the field a daemon's message names: an input signal, or one of the API's request fields", () => {
  assert.equal(fieldOf("input 'in[3]': not an integer: a string that is not decimal"), "in[3]");
  assert.equal(fieldOf("input 'a.b' is not an input signal of the circuit c.wasm"), "a.b");
  assert.equal(fieldOf("missing input signals 'k', 'x': 0 of the circuit's 2 input values given"), "k");
  assert.equal(fieldOf("key_id: the request names no key"), "key_id");
  assert.equal(fieldOf("proofs[2]: the proof does not verify"), "proofs[2]");
  assert.equal(fieldOf("cancelled: the client of Prove went away"), undefined);
  assert.equal(fieldOf("partition 2: self-verification failed"), undefined);
});

test("inputs: what snarkjs takes passes; BigInts go as decimal strings", () => {
  const inputs = { a: 1n, b: -2, c: "0x1f", d: ["3", [4n, "0b101"]], e: { f: [{ g: "7" }, { g: 8 }] }, h: true };
  checkInputs(inputs);
  assert.equal(JSON.parse(inputsJson({ a: 2n ** 200n })).a, (2n ** 200n).toString());
  let deep = 1;
  for (let i = 0; i < 70; i++) deep = [deep];
  assert.throws(() => checkInputs({ deep }), (e) => e instanceof api.InputError && /nest more than 64/.test(e.message));
  assert.throws(() => checkInputs({ n: NaN }), (e) => e.field === "n" && /not finite/.test(e.message));
  assert.throws(() => checkInputs({ s: "9".repeat(4001) }), (e) => e.field === "s");
  assert.throws(() => checkInputs({ e: { f: [{ g: "x" }] } }), (e) => e.field === "e.f[0].g");
  assert.throws(() => checkInputs(null), (e) => e instanceof api.InputError && /not null/.test(e.message));
});
