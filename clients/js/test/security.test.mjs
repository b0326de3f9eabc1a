// A daemon on TLS with client certificates (mutual TLS) and bearer tokens, whose synthesis is slowed
// ([debug] synthesis_delay) so that jobs can be cancelled and deadlines passed: refusals by kind, the
// roles, cancel, a job that outlives its caller's deadline fetched with await, jobs' server-side deadlines
// (refused, expired) and listJobs scoped to each token.
import assert from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { status as grpcStatus } from "@grpc/grpc-js";
import {
  AuthenticationError, CancelledError, connect, DeadlineError, NotFoundError, PermissionError, UnavailableError,
} from "../dist/esm/index.js";
import { python, REPO, startDaemon, workDir } from "./daemon.mjs";
import { endCurves, snarkjsFullProve, verify } from "./oracle.mjs";

const ALICE = "p-" + "1".repeat(30);  // prove role
const BOB = "p-" + "3".repeat(30);    // prove role
const OPS = "a-" + "2".repeat(30);    // admin role
const DELAY_MS = 700;

let daemon, dir, bn, pki;
const clients = [];

/** The tests' certificates, made by tests/daemon/certs.py: a server CA and certificate for 127.0.0.1, a
 * clients' CA and a client certificate it signed, and a stranger's certificate from another CA. */
async function makePki(d) {
  const script = `
import sys; sys.path.insert(0, sys.argv[1])
from pathlib import Path
from certs import Ca
d = Path(sys.argv[2])
ca = Ca.make(d, "server-ca"); ca.issue(d, "server", server=True)
Ca.make(d, "clients-ca").issue(d, "client", server=False)
Ca.make(d, "other-ca").issue(d, "stranger", server=False)`;
  await python(["-c", script, join(REPO, "tests", "daemon"), d]);
  const f = (n) => join(d, n);
  return { ca: f("server-ca.crt"), server: [f("server.crt"), f("server.key")], clientsCa: f("clients-ca.crt"),
           client: [f("client.crt"), f("client.key")], stranger: [f("stranger.crt"), f("stranger.key")] };
}

async function client(opts) {
  const sd = await connect({ address: daemon.addr, connectTimeoutMs: 5000, ...opts });
  clients.push(sd);
  return sd;
}

const mtls = () => ({ ca: pki.ca, cert: pki.client[0], key: pki.client[1] });

before(async () => {
  dir = workDir("security");
  bn = join(dir, "chain-bn128");
  pki = await makePki(dir);
  const tokens = join(dir, "tokens");
  writeFileSync(tokens, `# name role token\nalice prove ${ALICE}\nbob prove ${BOB}\nops admin ${OPS}\n`);
  chmodSync(tokens, 0o600);
  writeFileSync(join(dir, "alice.token"), ALICE + "\n");
  daemon = await startDaemon({
    dir,
    preload: { chain: join(bn, "chain.zkey") },
    daemonToml: [`tls_cert = "${pki.server[0]}"`, `tls_key = "${pki.server[1]}"`,
                 `tls_client_ca = "${pki.clientsCa}"`, `token_file = "${tokens}"`].join("\n"),
    extraToml: `[debug]\nsynthesis_delay = "${DELAY_MS}ms"\n`,
  });
});

after(async () => {
  for (const c of clients) c.close();
  await daemon?.stop();
  await endCurves();
});

/** One call through a fresh client with these options; what it throws (connect or the call). */
async function refusal(opts) {
  try {
    const sd = await client(opts);
    await sd.status();
  } catch (err) {
    return err;
  }
  assert.fail("the daemon answered");
}

describe("refusals", () => {
  test("plain text to a TLS daemon: UnavailableError", async () => {
    const err = await refusal({ token: ALICE, connectTimeoutMs: 1000 });
    assert.ok(err instanceof UnavailableError, `${err.name}: ${err.message}`);
  });

  test("a server certificate the client does not trust: UnavailableError", async () => {
    const err = await refusal({ token: ALICE, tls: { cert: pki.client[0], key: pki.client[1] }, connectTimeoutMs: 1000 });
    assert.ok(err instanceof UnavailableError, `${err.name}: ${err.message}`);
  });

  test("no client certificate, or one from another CA (mutual TLS): UnavailableError", async () => {
    for (const tls of [{ ca: pki.ca }, { ca: pki.ca, cert: pki.stranger[0], key: pki.stranger[1] }]) {
      const err = await refusal({ token: ALICE, tls, connectTimeoutMs: 1000 });
      assert.ok(err instanceof UnavailableError, `${err.name}: ${err.message}`);
    }
  });

  test("TLS right, no token or a wrong one: AuthenticationError (UNAUTHENTICATED)", async () => {
    for (const token of [undefined, "p-" + "9".repeat(30)]) {
      const err = await refusal({ tls: mtls(), token });
      assert.ok(err instanceof AuthenticationError, `${err.name}: ${err.message}`);
      assert.equal(err.code, grpcStatus.UNAUTHENTICATED);
    }
  });
});

describe("roles", () => {
  test("a prove token (from a file) proves; snarkjs verifies; loadKey is PermissionError", async () => {
    const sd = await client({ tls: mtls(), tokenFile: join(dir, "alice.token") });
    const { proof, publicSignals } = await sd.groth16.fullProve({ x: 3, k: 7 }, "chain");
    assert.equal(await verify(bn, proof, publicSignals), true);
    assert.deepEqual(publicSignals, (await snarkjsFullProve(bn, { x: 3, k: 7 })).publicSignals);
    await assert.rejects(sd.loadKey("other", join(bn, "chain.zkey")),
      (e) => e instanceof PermissionError && e.code === grpcStatus.PERMISSION_DENIED);
  });

  test("an admin token loads and unloads keys", async () => {
    const sd = await client({ tls: mtls(), token: OPS });
    assert.equal((await sd.loadKey("chain2", join(bn, "chain.zkey"))).id, "chain2");
    assert.equal((await sd.unloadKey("chain2")).id, "chain2");
  });

  test("another prove token's job is NotFoundError, as an unknown id", async () => {
    const alice = await client({ tls: mtls(), token: ALICE });
    const bob = await client({ tls: mtls(), token: BOB });
    const jobId = await alice.submit({ key: "chain", input: { x: 2, k: 2 } });
    await assert.rejects(bob.await(jobId), (e) => e instanceof NotFoundError);
    await assert.rejects(bob.cancel(jobId), (e) => e instanceof NotFoundError);
    const r = await alice.await(jobId);
    assert.equal(await verify(bn, r.proof, r.publicSignals), true);
  });
});

describe("cancel and deadlines", () => {
  test("cancel a queued job: CANCELLED, await throws CancelledError; the job before it is proved", async () => {
    const sd = await client({ tls: mtls(), token: ALICE });
    const first = await sd.submit({ key: "chain", input: { x: 1, k: 4 } });
    const second = await sd.submit({ key: "chain", input: { x: 1, k: 5 } });
    assert.deepEqual(await sd.cancel(second), { state: "CANCELLED", cancelled: true });
    await assert.rejects(sd.await(second), (e) => e instanceof CancelledError && e.jobId === second);
    assert.equal((await sd.jobState(second)).state, "CANCELLED");
    const r = await sd.await(first);
    assert.equal(await verify(bn, r.proof, r.publicSignals), true);
    assert.deepEqual(await sd.cancel(first), { state: "COMPLETED", cancelled: false });  // it had ended
  });

  test("a proof that outlives the call's deadline: DeadlineError with its job id; await fetches it", async () => {
    const sd = await client({ tls: mtls(), token: ALICE });
    const err = await sd.groth16.fullProve({ x: 9, k: 9 }, { key: "chain", timeoutMs: DELAY_MS / 2 })
      .then(() => assert.fail("proved within the deadline"), (e) => e);
    assert.ok(err instanceof DeadlineError, `${err.name}: ${err.message}`);
    assert.equal(err.code, grpcStatus.DEADLINE_EXCEEDED);
    assert.match(err.jobId, /^[0-9a-f]{24}$/);
    const r = await sd.await(err.jobId);
    assert.equal(await verify(bn, r.proof, r.publicSignals), true);
    assert.deepEqual(r.publicSignals, (await snarkjsFullProve(bn, { x: 9, k: 9 })).publicSignals);
  });

  test("await with a deadline shorter than the job: DeadlineError, the job goes on", async () => {
    const sd = await client({ tls: mtls(), token: ALICE });
    const jobId = await sd.submit({ key: "chain", input: { x: 8, k: 1 } });
    await assert.rejects(sd.await(jobId, { timeoutMs: 100 }), (e) => e instanceof DeadlineError && e.jobId === jobId);
    const r = await sd.await(jobId);
    assert.equal(await verify(bn, r.proof, r.publicSignals), true);
  });
});

describe("server-side deadlines and listJobs", () => {
  test("a deadline already past is refused at submit: DeadlineError 'refused' with the daemon's reason", async () => {
    const sd = await client({ tls: mtls(), token: ALICE });
    for (const deadline of [new Date(Date.now() - 1000), `@${Math.floor(Date.now() / 1000) - 5}`]) {
      const err = await sd.submit({ key: "chain", input: { x: 1, k: 1 }, deadline }).then(
        () => assert.fail("accepted"), (e) => e);
      assert.ok(err instanceof DeadlineError, `${err.name}: ${err.message}`);
      assert.equal(err.code, grpcStatus.DEADLINE_EXCEEDED);
      assert.equal(err.kind, "refused");
      assert.match(err.details, /^deadline: the job cannot finish in time: its deadline has already passed/);
      assert.ok((await sd.listJobs()).every((j) => j.jobId !== err.jobId), "a refused job is not listed");
    }
  });

  test("a deadline the daemon's estimate misses is refused, the estimate on the error", async () => {
    const sd = await client({ tls: mtls(), token: ALICE });
    await sd.prove({ key: "chain", input: { x: 2, k: 3 }, deadline: 600 });  // met; the key's latency is measured
    const err = await sd.prove({ key: "chain", input: { x: 2, k: 4 }, deadline: 0.05 }).then(
      () => assert.fail("accepted"), (e) => e);
    assert.ok(err instanceof DeadlineError && err.kind === "refused", `${err.name}: ${err.message}`);
    assert.match(err.details, /its deadline is .* away; estimated .*s: .* \(key 'chain'\)/);
    assert.ok(err.estimateS > 0.05, String(err.estimateS));
  });

  test("a job whose deadline passes while queued expires: await and prove throw DeadlineError 'expired'", async () => {
    const ops = await client({ tls: mtls(), token: OPS });
    await ops.loadKey("fresh", join(bn, "chain.zkey"));  // no proof measured: no estimate, its jobs are admitted
    const sd = await client({ tls: mtls(), token: ALICE });
    const first = await sd.submit({ key: "chain", input: { x: 3, k: 3 } });  // holds the one synthesis worker
    const late = await sd.submit({ key: "fresh", input: { x: 3, k: 4 }, deadline: 0.25 });
    const proving = sd.prove({ key: "fresh", input: { x: 3, k: 5 }, deadline: new Date(Date.now() + 250) })
      .then(() => assert.fail("proved"), (e) => e);
    const err = await sd.await(late).then(() => assert.fail("proved"), (e) => e);
    assert.ok(err instanceof DeadlineError && err.kind === "expired" && err.jobId === late, `${err.name}: ${err.message}`);
    assert.match(err.details, /^expired: its deadline passed before it started/);
    const perr = await proving;
    assert.ok(perr instanceof DeadlineError && perr.kind === "expired", `${perr.name}: ${perr.message}`);
    assert.equal(perr.code, grpcStatus.DEADLINE_EXCEEDED);
    assert.equal((await sd.jobState(late)).state, "EXPIRED");
    const [info] = await sd.listJobs({ states: ["expired"], keyId: "fresh", limit: 1 });  // the newest: prove's
    assert.equal(info.jobId, perr.jobId);
    assert.equal(info.state, "EXPIRED");
    assert.ok(info.deadlineUnix > info.submittedUnix && info.finishedUnix >= info.submittedUnix, JSON.stringify(info));
    assert.equal((await sd.await(first)).jobId, first);
    await ops.unloadKey("fresh");
  });

  test("listJobs: each prove token sees its own jobs (the same id in both), an admin token all, with who", async () => {
    const alice = await client({ tls: mtls(), token: ALICE });
    const bob = await client({ tls: mtls(), token: BOB });
    const ops = await client({ tls: mtls(), token: OPS });
    assert.equal(await alice.submit({ key: "chain", input: { x: 4, k: 1 }, jobId: "same-id", priority: 3 }), "same-id");
    assert.equal(await bob.submit({ key: "chain", input: { x: 4, k: 2 }, jobId: "same-id" }), "same-id");
    const mine = await alice.listJobs();
    assert.ok(mine.length >= 2 && mine.every((j) => j.client === ""), JSON.stringify(mine));
    const bobs = await bob.listJobs();
    assert.deepEqual(bobs.map((j) => [j.jobId, j.keyId, j.priority, j.partitions]), [["same-id", "chain", 0, 1]]);
    const aliceSame = mine.filter((j) => j.jobId === "same-id");
    assert.deepEqual(aliceSame.map((j) => j.priority), [3]);
    const sorted = mine.map((j) => j.submittedUnix);
    assert.deepEqual(sorted, [...sorted].sort((a, b) => b - a), "newest first");
    const all = await ops.listJobs({ keyId: "chain" });
    assert.deepEqual(all.filter((j) => j.jobId === "same-id").map((j) => j.client).sort(), ["alice", "bob"]);
    assert.equal((await alice.await("same-id")).jobId, "same-id");
    assert.equal((await bob.await("same-id")).jobId, "same-id");
    assert.deepEqual((await bob.listJobs({ states: ["COMPLETED"] })).map((j) => [j.jobId, j.done]), [["same-id", 1]]);
    assert.deepEqual(await bob.listJobs({ states: ["EXPIRED", "FAILED"] }), []);
  });
});
