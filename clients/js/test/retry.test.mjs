// Retries only where safe: a job the client named is submitted again while the daemon is unreachable
// (here: not started yet), and the calls that change the daemon's keys are not.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, test } from "node:test";
import { Snarkd, UnavailableError } from "../dist/esm/index.js";
import { freePort, startDaemon, workDir } from "./daemon.mjs";
import { endCurves, snarkjsFullProve, verify } from "./oracle.mjs";

let daemon;
after(async () => {
  await daemon?.stop();
  await endCurves();
});

test("submit and status retry until the daemon serves; loadKey does not retry", async () => {
  const dir = workDir("retry");
  const bn = join(dir, "chain-bn128");
  const port = await freePort();
  // Five tries after the first, 250 ms doubling: ~8 s for the daemon to come up.
  const sd = new Snarkd({ address: `127.0.0.1:${port}`, retries: 5 });
  try {
    const t0 = Date.now();
    await assert.rejects(sd.loadKey("k", join(bn, "chain.zkey")), (e) => e instanceof UnavailableError);
    assert.ok(Date.now() - t0 < 1000, "loadKey failed at once, untried again");
    const submitted = sd.submit({ key: "chain", input: { x: 6, k: 6 }, jobId: "js-retried" });
    const status = sd.status({ timeoutMs: 20_000 });
    daemon = await startDaemon({ dir, port, preload: { chain: join(bn, "chain.zkey") } });
    assert.equal(await submitted, "js-retried");
    assert.equal((await status).state, "serving");
    const r = await sd.await("js-retried");
    assert.equal(await verify(bn, r.proof, r.publicSignals), true);
    assert.deepEqual(r.publicSignals, (await snarkjsFullProve(bn, { x: 6, k: 6 })).publicSignals);
  } finally {
    sd.close();
  }
});
