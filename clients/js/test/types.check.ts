// Compiled (not run) by `npm test`: the published declarations type a consumer's ordinary use, and
// refuse what the API does not take.
import {
  connect, CircuitInputs, DeadlineError, DeadlineKind, Groth16Proof, InputError, JobFailedError, JobInfo, ListedJobState,
  ProveResult, PublicSignals, Snarkd, SnarkdError,
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
  await sd.submit({ key: "k", input, deadline: 30 });
  await sd.prove({ key: "k", input, deadline: "@1767225600", timeoutMs: 5000 });
  const jobs: JobInfo[] = await sd.listJobs({ states: ["EXPIRED", "QUEUED"], keyId: "k", limit: 10 });
  const listed: ListedJobState = jobs[0].state;
  const times: number = jobs[0].submittedUnix + jobs[0].finishedUnix + jobs[0].deadlineUnix + jobs[0].done;
  if (listed === "EXPIRED" && times) await sd.listJobs();
  try {
    await sd.status();
  } catch (e) {
    if (e instanceof InputError || e instanceof JobFailedError) console.log(e.field, e.code, e.jobId);
    if (e instanceof SnarkdError) console.log(e.codeName, e.details);
    if (e instanceof DeadlineError) {
      const kind: DeadlineKind = e.kind;
      console.log(kind === "refused" ? e.estimateS : e.details);
    }
  }
  // @ts-expect-error: a key id is required
  await sd.groth16.fullProve(input, {});
  // @ts-expect-error: a job's deadline is seconds, a Date or "@UNIX", no object
  await sd.submit({ key: "k", input, deadline: { seconds: 3 } });
  // @ts-expect-error: limit is a number
  await sd.listJobs({ limit: "10" });
  // @ts-expect-error: an input value is no object of functions
  await sd.submit({ key: "k", input: { a: () => 1 } });
}
void use;
