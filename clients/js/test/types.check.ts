// Compiled (not run) by `npm test`: the published declarations type a consumer's ordinary use, and
// refuse what the API does not take.
import {
  connect, CircuitInputs, Groth16Proof, InputError, JobFailedError, ProveResult, PublicSignals, Snarkd, SnarkdError,
} from "../dist/esm/index.js";

async function use(): Promise<void> {
  const sd: Snarkd = await connect({ address: "127.0.0.1:9820", tls: { ca: "ca.crt" }, tokenFile: "token" });
  const input: CircuitInputs = { a: 1n, b: "2", c: [3, "0x4"], bus: { x: [1, 2] } };
  const { proof, publicSignals }: { proof: Groth16Proof; publicSignals: PublicSignals } =
    await sd.groth16.fullProve(input, { key: "k", priority: 2, timeoutMs: 1000 });
  const ok: boolean = await sd.groth16.verify({}, publicSignals, proof);
  await sd.groth16.prove("k", Buffer.from([]));
  await sd.groth16.prove({ key: "k", deadline: new Date() }, { type: "mem", data: new Uint8Array(0) });
  const jobId: string = await sd.submit({ key: "k", wtns: ["a.wtns", "b.wtns"], transport: "stream" });
  const r: ProveResult = await sd.await(jobId, { timeoutMs: 10 });
  const n: number = r.partitions[0].index + (await sd.aggregate({ key: "k", jobIds: [jobId] })).n;
  const { state, cancelled } = await sd.cancel(jobId);
  if (state === "CANCELLED" && cancelled && ok && n) sd.close();
  try {
    await sd.status();
  } catch (e) {
    if (e instanceof InputError || e instanceof JobFailedError) console.log(e.field, e.code, e.jobId);
    if (e instanceof SnarkdError) console.log(e.codeName, e.details);
  }
  // @ts-expect-error: a key id is required
  await sd.groth16.fullProve(input, {});
  // @ts-expect-error: an input value is no object of functions
  await sd.submit({ key: "k", input: { a: () => 1 } });
}
void use;
