// fullProve / prove / submit-await / partitions / keys / aggregate / status / bad input, against one real
// daemon (both example curves preloaded); every proof checked by snarkjs.groth16.verify.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { status as grpcStatus } from "@grpc/grpc-js";
import {
  connect, InputError, JobFailedError, NotFoundError, SnarkdError, UnavailableError,
} from "../dist/esm/index.js";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { snarkd, startDaemon, workDir } from "./daemon.mjs";
import { endCurves, snarkjsFullProve, snarkjsWtns, verify } from "./oracle.mjs";

let daemon, sd, dir, bn, bls;

before(async () => {
  dir = workDir("prove");
  bn = join(dir, "chain-bn128");
  bls = join(dir, "chain-bls12381");
  await snarkd("aggregation-srs", "--dev", "--curve", "bn128", "--max", "4", join(dir, "dev.srs"));
  daemon = await startDaemon({
    dir,
    preload: { chain: join(bn, "chain.zkey"), chain_bls: join(bls, "chain.zkey") },
    extraToml: `[aggregate]\nsrs = "${join(dir, "dev.srs")}"\n[scheduler.lanes.urgent]\npriority = 10\n`,
  });
  sd = await connect({ address: daemon.addr, timeoutMs: 60_000 });
});

after(async () => {
  sd?.close();
  await daemon?.stop();
  await endCurves();
});

describe("fullProve", () => {
  for (const [name, key, circuit] of [["bn128", "chain", () => bn], ["bls12381", "chain_bls", () => bls]]) {
    test(`${name}: snarkjs verifies the proof, publicSignals equal snarkjs's fullProve`, async () => {
      const input = { x: 3n, k: "7" };  // a BigInt and a decimal string, as snarkjs takes them
      const { proof, publicSignals } = await sd.groth16.fullProve(input, { key });
      assert.deepEqual(Object.keys(proof).sort(), ["curve", "pi_a", "pi_b", "pi_c", "protocol"]);
      assert.equal(proof.protocol, "groth16");
      assert.equal(proof.curve, name);
      assert.equal(await verify(circuit(), proof, publicSignals), true);
      const theirs = await snarkjsFullProve(circuit(), input);
      assert.deepEqual(publicSignals, theirs.publicSignals);
    });
  }

  test("numbers, hex strings and negative values are the same inputs snarkjs reads", async () => {
    const input = { x: "0x11", k: -5 };  // -5 is taken mod p, as circom's witness calculator does
    const { proof, publicSignals } = await sd.groth16.fullProve(input, "chain");
    assert.equal(await verify(bn, proof, publicSignals), true);
    assert.deepEqual(publicSignals, (await snarkjsFullProve(bn, input)).publicSignals);
  });
});

describe("prove from a witness", () => {
  test("a .wtns Buffer, its path, and snarkjs's { type: 'mem' } give the same, verified proof statement", async () => {
    const path = join(bn, "chain.wtns");
    const results = [
      await sd.groth16.prove({ key: "chain" }, readFileSync(path)),
      await sd.groth16.prove("chain", path),
      await sd.groth16.prove("chain", { type: "mem", data: readFileSync(path) }),
    ];
    const expected = (await snarkjsFullProve(bn, JSON.parse(readFileSync(join(bn, "input.json"), "utf8")))).publicSignals;
    for (const { proof, publicSignals } of results) {
      assert.deepEqual(publicSignals, expected);
      assert.equal(await verify(bn, proof, publicSignals), true);
    }
  });

  test("a witness streamed in chunks (ProveStream), computed by snarkjs's wtns.calculate", async () => {
    const wtns = await snarkjsWtns(bn, { x: 5, k: 11 });
    const r = await sd.prove({ key: "chain", wtns, transport: "stream", priority: 3 });
    assert.equal(await verify(bn, r.proof, r.publicSignals), true);
    assert.deepEqual(r.publicSignals, (await snarkjsFullProve(bn, { x: 5, k: 11 })).publicSignals);
    assert.ok(r.timingsMs.total > 0, "the daemon's timings come back");
  });
});

describe("submit / await", () => {
  test("a job on a lane: listed by it; an unknown lane is an InputError naming it", async () => {
    const jobId = await sd.submit({ key: "chain", input: { x: 2, k: 5 }, lane: "urgent" });
    const r = await sd.await(jobId);
    assert.equal(await verify(bn, r.proof, r.publicSignals), true);
    const listed = await sd.listJobs({ lane: "urgent" });
    assert.ok(listed.some((j) => j.jobId === jobId && j.lane === "urgent"), JSON.stringify(listed));
    assert.ok((await sd.listJobs({ lane: "default" })).every((j) => j.jobId !== jobId));
    const err = await sd.submit({ key: "chain", input: { x: 2, k: 5 }, lane: "nope" }).then(
      () => assert.fail("accepted"), (e) => e);
    assert.ok(err instanceof InputError && err.code === grpcStatus.INVALID_ARGUMENT, `${err.name}: ${err.message}`);
    assert.match(err.message, /lane: no lane 'nope'/);
  });

  test("submit returns an id at once; await gives the verified proof", async () => {
    const jobId = await sd.submit({ key: "chain", input: { x: 4, k: 9 } });
    assert.match(jobId, /^[0-9a-f]{24}$/);
    const r = await sd.await(jobId);
    assert.equal(r.jobId, jobId);
    assert.equal(await verify(bn, r.proof, r.publicSignals), true);
    assert.deepEqual(r.publicSignals, (await snarkjsFullProve(bn, { x: 4, k: 9 })).publicSignals);
    assert.deepEqual(await sd.jobState(jobId), { state: "COMPLETED", error: "" });
  });

  test("a job of several partitions (streamed witnesses and inputs), each proof verified", async () => {
    const inputs = [{ x: 1, k: 2 }, { x: 6, k: 1 }, { x: 2, k: 8 }];
    const fromInputs = await sd.await(await sd.submit({ key: "chain", input: inputs, jobId: "js-parts-1" }));
    const wtns = await Promise.all(inputs.map((i) => snarkjsWtns(bn, i)));
    const fromWtns = await sd.await(await sd.submit({ key: "chain", wtns, transport: "stream", jobId: "js-parts-2" }));
    for (const r of [fromInputs, fromWtns]) {
      assert.equal(r.partitions.length, 3);
      for (const [i, p] of r.partitions.entries()) {
        assert.equal(p.index, i);
        assert.equal(await verify(bn, p.proof, p.publicSignals), true);
        assert.deepEqual(p.publicSignals, (await snarkjsFullProve(bn, inputs[i])).publicSignals);
      }
    }
  });

  test("a job id in use is refused (ALREADY_EXISTS); an unknown one is NotFoundError", async () => {
    await sd.prove({ key: "chain", input: { x: 1, k: 1 }, jobId: "js-dup" });
    await assert.rejects(sd.submit({ key: "chain", input: { x: 1, k: 1 }, jobId: "js-dup" }),
      (e) => e instanceof InputError && e.code === grpcStatus.ALREADY_EXISTS && e.jobId === "js-dup" &&
        e.errorKind === "already_exists");
    await assert.rejects(sd.await("js-never-submitted"),
      (e) => e instanceof NotFoundError && e.code === grpcStatus.NOT_FOUND && e.errorKind === "not_found");
  });
});

describe("bad input: a typed error naming the field", () => {
  const cases = [
    // [what, input, field, checked by the daemon (a gRPC code) or before sending (-1)]
    ["a signal the circuit lacks", { x: 1, k: 2, y: 3 }, "y", grpcStatus.INVALID_ARGUMENT],
    ["too many values", { x: [1, 2], k: 2 }, "x", grpcStatus.INVALID_ARGUMENT],
    ["a value not below the field prime",
      { x: "21888242871839275222246405745257275088548364400416034343698204186575808495617", k: 1 }, "x",
      grpcStatus.INVALID_ARGUMENT],
    ["a fraction", { x: 1.5, k: 2 }, "x", -1],
    ["a string of letters", { x: 1, k: "seven" }, "k", -1],
    ["a number past 2^53", { x: 2 ** 60, k: 2 }, "x", -1],
    ["null", { x: null, k: 2 }, "x", -1],
    ["an element of an array", { x: 1, k: [1, "abc", 3] }, "k[1]", -1],
    ["an array mixing bus objects and values", { x: 1, k: [1, {}, 3] }, "k", -1],
  ];
  for (const [what, input, field, code] of cases) {
    test(`${what}: InputError, field '${field}'`, async () => {
      await assert.rejects(sd.groth16.fullProve(input, "chain"), (e) => {
        assert.ok(e instanceof InputError, `${e.name}: ${e.message}`);
        assert.equal(e.field, field, e.message);
        assert.equal(e.code, code, e.message);
        assert.match(e.message, new RegExp(`'${field.replace(/[[\]]/g, "\\$&")}'`));
        return true;
      });
    });
  }

  test("inputs that are not an object", async () => {
    await assert.rejects(sd.groth16.fullProve([1, 2], "chain"), (e) => e instanceof InputError && /object/.test(e.message));
  });

  test("a missing signal: InputError saying how many values were given", async () => {
    // The daemon names the missing signals when the circuit's .sym lies beside its .wasm; the bundled
    // examples have none, so it gives the count.
    await assert.rejects(sd.groth16.fullProve({ x: 1 }, "chain"), (e) => e instanceof InputError &&
      e.code === grpcStatus.INVALID_ARGUMENT && /missing input signal.*1 of the circuit's 2/.test(e.message));
  });

  test("submit takes a job the daemon then fails: await throws JobFailedError naming the signal", async () => {
    const jobId = await sd.submit({ key: "chain", input: { x: 1, k: 2, z: 0 } });
    await assert.rejects(sd.await(jobId), (e) => e instanceof JobFailedError && e.field === "z" && e.jobId === jobId);
    assert.equal((await sd.jobState(jobId)).state, "FAILED");
  });

  test("a witness that is no .wtns file, an unreadable path, a wrong witness: field 'wtns'", async () => {
    await assert.rejects(sd.groth16.prove("chain", Buffer.from("not a witness at all")),
      (e) => e instanceof InputError && e.field === "wtns" && e.code === -1);
    await assert.rejects(sd.groth16.prove("chain", join(dir, "no-such.wtns")),
      (e) => e instanceof InputError && e.field === "wtns" && /ENOENT/.test(e.message));
    // a valid .wtns of the other curve's circuit: the daemon refuses it
    await assert.rejects(sd.groth16.prove("chain", join(bls, "chain.wtns")),
      (e) => e instanceof InputError && e.code === grpcStatus.INVALID_ARGUMENT);
  });

  test("an unknown key is NotFoundError; a bad job id or priority is refused before sending", async () => {
    await assert.rejects(sd.groth16.fullProve({ x: 1, k: 2 }, "no-such-key"),
      (e) => e instanceof NotFoundError && /no-such-key/.test(e.message));
    await assert.rejects(sd.submit({ key: "chain", input: { x: 1, k: 2 }, jobId: "bad id/../x" }),
      (e) => e instanceof InputError && e.field === "jobId" && e.code === -1);
    await assert.rejects(sd.submit({ key: "chain", input: { x: 1, k: 2 }, priority: 1.5 }),
      (e) => e instanceof InputError && e.field === "priority");
    await assert.rejects(sd.submit({ key: "chain" }), (e) => e instanceof InputError && /input .* or wtns/.test(e.message));
  });
});

describe("keys, aggregate, status", () => {
  test("loadKey / unloadKey: a key loaded at run time proves, then is gone", async () => {
    const info = await sd.loadKey("chain2", join(bn, "chain.zkey"));
    assert.equal(info.id, "chain2");
    assert.equal(info.curve, "bn128");
    assert.equal(info.n_public, 2);
    const { proof, publicSignals } = await sd.groth16.fullProve({ x: 2, k: 3 }, "chain2");
    assert.equal(await verify(bn, proof, publicSignals), true);
    assert.equal((await sd.unloadKey("chain2")).id, "chain2");
    await assert.rejects(sd.groth16.fullProve({ x: 2, k: 3 }, "chain2"), (e) => e instanceof NotFoundError);
  });

  test("aggregate two finished jobs: `snarkd verify-aggregate` accepts the result", async () => {
    const ids = [];
    for (const k of [5, 6]) ids.push((await sd.prove({ key: "chain", input: { x: 2, k } })).jobId);
    const agg = await sd.aggregate({ key: "chain", jobIds: ids });
    assert.equal(agg.n, 2);
    assert.equal(agg.devSrs, true);
    const path = join(dir, "agg.json");
    (await import("node:fs")).writeFileSync(path, agg.aggregateJson);
    await snarkd("verify-aggregate", join(bn, "vk.json"), join(dir, "dev.srs"), path);  // rejects on exit != 0
    await assert.rejects(sd.aggregate({ key: "chain", jobIds: [ids[0], ids[1], ids[0]] }),
      (e) => e instanceof InputError && e.code === grpcStatus.INVALID_ARGUMENT && /power of two/.test(e.message));
  });

  test("status: the keys and the job counts", async () => {
    const st = await sd.status();
    assert.equal(st.state, "serving");
    assert.deepEqual(st.keys.map((k) => k.id).sort(), ["chain", "chain_bls"]);
    assert.ok(st.completed >= 10, `completed ${st.completed}`);
  });

  test("a daemon that is not there: connect fails with UnavailableError", async () => {
    await assert.rejects(connect({ address: "127.0.0.1:1", connectTimeoutMs: 1000 }),
      (e) => e instanceof UnavailableError && e instanceof SnarkdError && e.code === grpcStatus.UNAVAILABLE);
  });
});

describe("the package", () => {
  const pkgDir = join(dirname(fileURLToPath(import.meta.url)), "..");
  const run = promisify(execFile);

  test("the CommonJS build (require) proves too, with the same error classes", async () => {
    const cjs = createRequire(import.meta.url)("../dist/cjs/index.js");
    const c = await cjs.connect({ address: daemon.addr });
    try {
      const { proof, publicSignals } = await c.groth16.fullProve({ x: 7, k: 7 }, "chain");
      assert.equal(await verify(bn, proof, publicSignals), true);
      await assert.rejects(c.groth16.fullProve({ x: 7, k: 7, q: 1 }, "chain"),
        (e) => e instanceof cjs.InputError && e.field === "q");
    } finally {
      c.close();
    }
  });

  test("npm pack's tarball installs into a fresh project, which proves (ESM and CommonJS)", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "snarkd-js-pack-"));
    try {
      // dist is built already (the tests run on it): --ignore-scripts skips prepack's rebuild.
      const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", scratch],
        { cwd: pkgDir });
      const tarball = join(scratch, JSON.parse(stdout)[0].filename);
      writeFileSync(join(scratch, "package.json"), '{ "name": "scratch", "private": true }\n');
      await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", tarball],
        { cwd: scratch, timeout: 120_000 });
      const input = JSON.stringify({ x: 12, k: 34 });
      writeFileSync(join(scratch, "prove.mjs"), `import { connect } from "snarkd-client";
const sd = await connect({ address: process.argv[2] });
console.log(JSON.stringify(await sd.groth16.fullProve(${input}, "chain")));
sd.close();\n`);
      writeFileSync(join(scratch, "prove.cjs"), `const { connect } = require("snarkd-client");
connect({ address: process.argv[2] }).then(async (sd) => {
  console.log(JSON.stringify(await sd.groth16.fullProve(${input}, "chain")));
  sd.close();
});\n`);
      const expected = (await snarkjsFullProve(bn, JSON.parse(input))).publicSignals;
      for (const script of ["prove.mjs", "prove.cjs"]) {
        const out = await run(process.execPath, [script, daemon.addr], { cwd: scratch });
        const { proof, publicSignals } = JSON.parse(out.stdout);
        assert.deepEqual(publicSignals, expected);
        assert.equal(await verify(bn, proof, publicSignals), true, script);
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe("examples/prove-server.mjs", () => {
  test("proves on POST /prove/chain; bad inputs are 400 naming the field; an unknown key 404", async () => {
    const example = join(dirname(fileURLToPath(import.meta.url)), "..", "examples", "prove-server.mjs");
    const child = spawn(process.execPath, [example], {
      env: { ...process.env, SNARKD_ADDRESS: daemon.addr, PORT: "0" }, stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const [line] = await once(child.stdout, "data");
      const base = /listening on (http:\/\/\S+)/.exec(String(line))[1];
      const post = (path, body) => fetch(base + path, { method: "POST", body: JSON.stringify(body) });
      const ok = await post("/prove/chain", { x: "21", k: "4" });
      assert.equal(ok.status, 200);
      const { proof, publicSignals } = await ok.json();
      assert.equal(await verify(bn, proof, publicSignals), true);
      assert.deepEqual(publicSignals, (await snarkjsFullProve(bn, { x: "21", k: "4" })).publicSignals);
      for (const [body, field] of [[{ x: "21", k: "four" }, "k"], [{ x: 1, k: 2, w: 3 }, "w"]]) {
        const bad = await post("/prove/chain", body);
        assert.equal(bad.status, 400);
        assert.equal((await bad.json()).field, field);
      }
      assert.equal((await post("/prove/nokey", { x: 1, k: 2 })).status, 404);
    } finally {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    }
  });
});
