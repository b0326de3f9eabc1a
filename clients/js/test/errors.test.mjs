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

test("DEADLINE_EXCEEDED: the daemon's refusal (with its estimate) or expiry, else the call's own deadline", () => {
  const refused = fromGrpc({ code: status.DEADLINE_EXCEEDED, details: "deadline: the job cannot finish in time: its " +
    "deadline is 0.5s away; estimated 2.2s: 6 partition(s) ahead ~1.5s, its own ~0.7s (key 'chain')" }, "h:1", 50);
  assert.ok(refused instanceof api.DeadlineError);
  assert.equal(refused.kind, "refused");
  assert.equal(refused.estimateS, 2.2);
  assert.match(refused.message, /^snarkd at h:1: deadline: the job cannot finish in time/);
  const past = fromGrpc({ code: status.DEADLINE_EXCEEDED, details: "deadline: the job cannot finish in time: its " +
    "deadline has already passed; no estimate: key 'k' has no proof measured yet" }, "h:1");
  assert.equal(past.kind, "refused");
  assert.equal(past.estimateS, undefined);
  const expired = fromGrpc({ code: status.DEADLINE_EXCEEDED,
    details: "job j1: expired: its deadline passed before it started (0.31s after it was queued)" }, "h:1");
  assert.equal(expired.kind, "expired");
  assert.match(expired.details, /before it started/);
  const call = fromGrpc({ code: status.DEADLINE_EXCEEDED, details: "Deadline exceeded after 0.501s" }, "h:1", 500);
  assert.equal(call.kind, "call");
  assert.match(call.message, /no reply from snarkd at h:1 within 500 ms/);
});

test("a job's deadline: seconds from now, a Date or '@UNIX'; anything else refused naming the option", () => {
  const now = Date.now();
  const rel = api.jobDeadline(30);
  assert.equal(rel.absolute, false);
  assert.ok(Math.abs(rel.at - (now + 30_000)) < 1000);
  assert.equal(api.jobDeadline(" 2.5 ").absolute, false);
  assert.deepEqual(api.jobDeadline("@1767225600"), { at: 1767225600_000, absolute: true });
  assert.deepEqual(api.jobDeadline(new Date(1767225600_000)), { at: 1767225600_000, absolute: true });
  assert.equal(api.jobDeadline(undefined), null);
  for (const bad of [0, -1, NaN, Infinity, "", "soon", "@", "@-5", "30s", true, {}, new Date("no"), new Date(0)]) {
    assert.throws(() => api.jobDeadline(bad), (e) => e instanceof api.InputError && e.field === "deadline" &&
      e.code === -1 && /^deadline: /.test(e.message), String(bad));
  }
  // epoch milliseconds (the form `deadline` takes on the other calls) are no "seconds from now"
  assert.throws(() => api.jobDeadline(now), (e) => e.field === "deadline" && /over 31 years.*Date or "@UNIX_SECONDS"/.test(e.message));
});

test("submit / listJobs refuse bad options before sending", async () => {
  const sd = new api.Snarkd({ address: "127.0.0.1:1", retries: 0 });
  try {
    await assert.rejects(sd.submit({ key: "k", input: { a: 1 }, deadline: -3 }),
      (e) => e instanceof api.InputError && e.field === "deadline" && e.code === -1);
    await assert.rejects(sd.prove({ key: "k", input: { a: 1 }, deadline: "tomorrow" }),
      (e) => e instanceof api.InputError && e.field === "deadline");
    await assert.rejects(sd.submit({ key: "k", input: { a: 1 }, lane: 3 }),
      (e) => e instanceof api.InputError && e.field === "lane" && e.code === -1);
    for (const [opts, field] of [[{ states: ["TIMEOUT"] }, "states"], [{ states: ["QUEUED", "done"] }, "states"],
                                 [{ states: [3] }, "states"], [{ limit: -1 }, "limit"], [{ limit: 1.5 }, "limit"],
                                 [{ keyId: 7 }, "keyId"], [{ lane: 7 }, "lane"]]) {
      await assert.rejects(sd.listJobs(opts), (e) => e instanceof api.InputError && e.field === field && e.code === -1,
        JSON.stringify(opts));
    }
    await assert.rejects(sd.listJobs({ states: ["QUEUED", "done"] }), /states\[1\]: "done" is not one of QUEUED/);
  } finally {
    sd.close();
  }
});

test("the daemon's error kind comes from its snarkd-error-kind trailer, none without it", () => {
  const metadata = { get: (k) => (k === "snarkd-error-kind" ? ["busy"] : []) };
  const e = fromGrpc({ code: status.RESOURCE_EXHAUSTED, details: "queue full", metadata }, "h:1");
  assert.ok(e instanceof api.InputError);
  assert.equal(e.errorKind, "busy");
  assert.equal(fromGrpc({ code: status.UNAVAILABLE, details: "down" }, "h:1").errorKind, undefined);
});
