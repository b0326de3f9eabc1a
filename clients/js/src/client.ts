// The client: one gRPC channel to a snarkd daemon, with snarkjs's groth16 shapes on top.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import {
  CancelledError, DeadlineError, InputError, SnarkdError, UnavailableError, fieldOf, fromGrpc,
} from "./errors.js";
import { CircuitInputs, inputsJson } from "./inputs.js";
import { ProverClient, proverClass } from "./proto.js";
import { WitnessSource, witnessBytes } from "./wtns.js";

/** PEM given as its bytes, its text, or a file path. */
export type Pem = Uint8Array | string;

export interface TlsOptions {
  /** CA certificate(s) to trust for the daemon's certificate (default: the system's roots). */
  ca?: Pem;
  /** The client's certificate and key, for a daemon with `tls_client_ca` (mutual TLS). */
  cert?: Pem;
  key?: Pem;
  /** The name to check the daemon's certificate against, when it differs from the address's host. */
  serverName?: string;
}

export interface ConnectOptions {
  /** "HOST:PORT", "unix:/path" or a bare "/path" (a unix socket). */
  address: string;
  /** TLS: `true` for the system's roots, or the CA / client certificate to use. Off when absent. */
  tls?: boolean | TlsOptions;
  /** The bearer token sent with every call (README "Security"), or `tokenFile`: a file holding it. */
  token?: string;
  tokenFile?: string;
  /** Default deadline of proving calls (prove, fullProve, await): 10 minutes. */
  timeoutMs?: number;
  /** Default deadline of the other calls (submit, cancel, status, keys): 30 seconds. */
  callTimeoutMs?: number;
  /** How long `connect` waits for the channel to be ready (TLS handshake included): 10 seconds. */
  connectTimeoutMs?: number;
  /** Tries after the first for calls that are safe to repeat, when the daemon is unreachable: 2. */
  retries?: number;
  /** Largest message sent or received: 512 MiB, as the daemon's default [limits] max_message. */
  maxMessageBytes?: number;
}

/** Per-call options: the deadline, as a duration or a point in time (Date or epoch ms). */
export interface CallOptions {
  timeoutMs?: number;
  deadline?: Date | number;
}

/** A job's server-side deadline (the proto's ProveRequest.deadline_s / deadline_unix), in the Python client's
 * forms: seconds from now (a number > 0, or its decimal string), or an absolute time: a Date, or "@UNIX_SECONDS"
 * (as `snarkd prove --deadline @1767225600`). */
export type JobDeadline = number | Date | string;

export interface JobOptions {
  /** How long this call waits (prove: 10 minutes, or until the job's `deadline` and 10 s more; submit: 30 s). */
  timeoutMs?: number;
  /** The job's server-side deadline (see JobDeadline): the daemon refuses the job at once when its completion
   * estimate passes it (or it has passed), and ends a job still queued or running at it EXPIRED; either is a
   * DeadlineError (`kind` "refused", with the daemon's estimate, or "expired"). Not the call's own deadline
   * (`timeoutMs`), as `deadline` is for the other calls. */
  deadline?: JobDeadline;
  /** The job's id (letters, digits and _ . : -, at most 128): a random one when absent. The daemon keeps
   * a named job's result for `await` even when the caller goes away. */
  jobId?: string;
  /** Higher runs first (default 0). */
  priority?: number;
  /** The daemon's lane ([scheduler.lanes]) to run in: absent, the token's lane, else "default". An unknown lane
   * is an InputError (INVALID_ARGUMENT), a lane other than the token's a PermissionDenied. */
  lane?: string;
  /** The daemon verifies the job's partitions together, as one batch. */
  batchVerify?: boolean;
  /** How witnesses travel: "auto" (inline up to 1 MiB, else streamed), "inline" or "stream". */
  transport?: "auto" | "inline" | "stream";
}

/** One job: a loaded key, and inputs (the daemon computes the witness) or witnesses; an array of
 * either makes a job of several partitions, one proof each. */
export interface JobSpec extends JobOptions {
  key: string;
  input?: CircuitInputs | CircuitInputs[];
  wtns?: WitnessSource | WitnessSource[];
}

/** snarkjs's proof.json object. */
export interface Groth16Proof {
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
  protocol: string;
  curve: string;
}
export type PublicSignals = string[];

export interface PartitionResult {
  index: number;
  proof: Groth16Proof;
  publicSignals: PublicSignals;
  timingsMs: Record<string, number>;
}

export interface ProveResult {
  jobId: string;
  /** Of partition 0. */
  proof: Groth16Proof;
  publicSignals: PublicSignals;
  /** Per phase (witness, synthesis, msm_*, verify ...) summed over partitions, plus queue_wait and total. */
  timingsMs: Record<string, number>;
  partitions: PartitionResult[];
}

export type JobState = "QUEUED" | "RUNNING" | "COMPLETED" | "FAILED" | "CANCELLED" | "EXPIRED" | "TIMEOUT";

/** The states a job can be in, as listJobs takes and returns them (the Python client's names). */
export const JOB_STATES = ["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "EXPIRED"] as const;
export type ListedJobState = (typeof JOB_STATES)[number];

export interface ListJobsOptions extends CallOptions {
  /** Only jobs in one of these states (none: any); names as JOB_STATES, in any case. */
  states?: ListedJobState[] | ListedJobState | string[] | string;
  /** Only jobs of this key. */
  keyId?: string;
  /** Only jobs of this lane. */
  lane?: string;
  /** At most this many, the newest (0 or absent: all). */
  limit?: number;
}

/** One job as ListJobs describes it (the proto's JobInfo). Times are Unix seconds, 0 for none. */
export interface JobInfo {
  jobId: string;
  keyId: string;
  state: ListedJobState;
  priority: number;
  /** Its partitions (0 for a finished job read from the daemon's journal), and those proved. */
  partitions: number;
  done: number;
  submittedUnix: number;
  /** 0 while unfinished. */
  finishedUnix: number;
  /** 0: no deadline (or a finished job read from the journal). */
  deadlineUnix: number;
  error: string;
  /** Who submitted it (its token's name, else its address): for an admin token only, else "". */
  client: string;
  /** The lane it ran in ("" for a job read from the journal of a daemon without lanes). */
  lane: string;
}

export interface AggregateSpec extends CallOptions {
  key: string;
  /** Finished jobs of this daemon (each gives its partitions' proofs, in order) ... */
  jobIds?: string[];
  /** ... or proofs given (not both). n in all: a power of two from 2. */
  proofs?: Array<{ proof: Groth16Proof | string; publicSignals: PublicSignals | string }>;
  /** An SRS file on the daemon's host, under its key directories ("" = its [aggregate] srs). */
  srsPath?: string;
}

export interface AggregateResult {
  /** The aggregate file's text, exactly as `snarkd aggregate` writes it. */
  aggregateJson: string;
  n: number;
  /** Made with a development SRS: NOT SECURE FOR PRODUCTION. */
  devSrs: boolean;
  timingsMs: Record<string, number>;
}

/** A key as the daemon describes it (the proto's KeyInfo, its field names). */
export type KeyInfo = Record<string, unknown> & { id: string; curve: string; n_public: number };

const JOB_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;
const MAX_ID = 128;
const INLINE_MAX = 1 << 20;  // auto: bigger witnesses (in all) are streamed
const CHUNK = 1 << 20;
const MAX_RELATIVE_S = 1e9;  // ~31 years: a larger "seconds from now" is an absolute time given as a number
const DEADLINE_GRACE_MS = 10_000;  // prove with a job deadline waits this much past it for the daemon's answer

function newJobId(): string {
  return randomBytes(12).toString("hex");  // as the daemon makes them: 24 hex digits
}

export function checkJobId(jobId: unknown, what = "jobId"): string {
  if (typeof jobId !== "string" || jobId.length > MAX_ID || !JOB_ID.test(jobId)) {
    throw new InputError(`${what}: a job id may use letters, digits and _ . : - only, starting with a letter or ` +
      `digit, ${MAX_ID} characters at most`, -1, undefined, what);
  }
  return jobId;
}

/** A job deadline (see JobDeadline) as epoch ms, and whether it was given as an absolute time; null for none. */
export function jobDeadline(deadline: unknown): { at: number; absolute: boolean } | null {
  if (deadline === undefined || deadline === null) return null;
  const bad = (why: string) => new InputError(`deadline: ${why}`, -1, undefined, "deadline");
  if (deadline instanceof Date) {
    const at = deadline.getTime();
    if (!(at > 0)) throw bad("an invalid Date, or one before 1970");
    return { at, absolute: true };
  }
  const text = typeof deadline === "string" ? deadline.trim() : null;
  const absolute = text !== null && text.startsWith("@");
  const value = typeof deadline === "number" ? deadline : text && /^@?[0-9.eE+-]+$/.test(text) ?
    Number(absolute ? text.slice(1) : text) : NaN;
  if (!Number.isFinite(value) || value <= 0) {
    throw bad(`expected seconds from now (a number > 0, e.g. 30), a Date or "@UNIX_SECONDS", got ` +
      (typeof deadline === "string" ? JSON.stringify(deadline) : String(deadline)));
  }
  if (absolute) return { at: value * 1000, absolute };
  if (value > MAX_RELATIVE_S) {
    throw bad(`${value} seconds from now is over 31 years: give an absolute time as a Date or "@UNIX_SECONDS"`);
  }
  return { at: Date.now() + value * 1000, absolute };
}

function checkKeyId(key: unknown): string {
  if (typeof key !== "string" || key === "") {
    throw new InputError("key: the id of a key loaded in the daemon is required", -1, undefined, "key");
  }
  return key;
}

function pem(value: Pem | undefined, what: string): Buffer | null {
  if (value === undefined) return null;
  if (value instanceof Uint8Array) return Buffer.from(value);
  if (value.includes("-----BEGIN")) return Buffer.from(value);
  try {
    return readFileSync(value);
  } catch (err) {
    throw new InputError(`tls.${what}: cannot read ${value}: ${(err as NodeJS.ErrnoException).code}`, -1, undefined,
      `tls.${what}`);
  }
}

function readToken(opts: ConnectOptions): string | undefined {
  if (opts.token !== undefined && opts.tokenFile !== undefined) {
    throw new InputError("token: give token or tokenFile, not both", -1, undefined, "token");
  }
  if (opts.tokenFile === undefined) return opts.token;
  try {
    return readFileSync(opts.tokenFile, "utf8").trim();
  } catch (err) {
    throw new InputError(`tokenFile: cannot read ${opts.tokenFile}: ${(err as NodeJS.ErrnoException).code}`, -1,
      undefined, "tokenFile");
  }
}

function target(address: string): string {
  const a = String(address ?? "").trim();
  if (/^(unix|unix-abstract|dns|ipv4|ipv6):/.test(a)) return a;
  if (a.startsWith("/")) return `unix:${a}`;
  if (!a.includes(":")) {
    throw new InputError(`address: '${a}' is not HOST:PORT or unix:PATH`, -1, undefined, "address");
  }
  return a;
}

function json<T>(text: string, fallback: T): T {
  return text ? (JSON.parse(text) as T) : fallback;
}

type Reply = Record<string, any>;

function jobInfo(j: Reply): JobInfo {
  return {
    jobId: j.job_id, keyId: j.key_id, state: j.state, priority: j.priority, partitions: j.partitions, done: j.done,
    submittedUnix: j.submitted_unix, finishedUnix: j.finished_unix, deadlineUnix: j.deadline_unix, error: j.error,
    client: j.client, lane: j.lane ?? "",
  };
}

function proveResult(m: Reply): ProveResult {
  return {
    jobId: m.job_id,
    proof: json(m.proof_json, {} as Groth16Proof),
    publicSignals: json(m.public_json, [] as PublicSignals),
    timingsMs: { ...(m.timings_ms ?? {}) },
    partitions: (m.partitions ?? []).map((p: Reply) => ({
      index: p.index,
      proof: json(p.proof_json, {} as Groth16Proof),
      publicSignals: json(p.public_json, [] as PublicSignals),
      timingsMs: { ...(p.timings_ms ?? {}) },
    })),
  };
}

/** An awaited job that ended FAILED: `details` is the daemon's reason, `field` the input it names. */
export class JobFailedError extends SnarkdError {
  readonly field?: string;
  constructor(jobId: string, error: string) {
    super(`job ${jobId} failed: ${error}`, -1, error);
    this.jobId = jobId;
    this.field = fieldOf(error);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The groth16 calls, in snarkjs's shapes. */
export class Groth16 {
  constructor(private readonly sd: Snarkd) {}

  /** snarkjs.groth16.fullProve(input, wasm, zkey), with the witness computed and the proof made on the
   * daemon by the key loaded as `key`: { proof, publicSignals } as snarkjs returns them. */
  async fullProve(input: CircuitInputs, key: string | (JobOptions & { key: string })):
      Promise<{ proof: Groth16Proof; publicSignals: PublicSignals }> {
    const opts = typeof key === "string" ? { key } : key;
    const { proof, publicSignals } = await this.sd.prove({ ...opts, input });
    return { proof, publicSignals };
  }

  /** snarkjs.groth16.prove(zkey, wtns): a .wtns (bytes, path, or { type: "mem", data }) proved with the
   * key loaded as `key`. */
  async prove(key: string | (JobOptions & { key: string }), wtns: WitnessSource):
      Promise<{ proof: Groth16Proof; publicSignals: PublicSignals }> {
    const opts = typeof key === "string" ? { key } : key;
    const { proof, publicSignals } = await this.sd.prove({ ...opts, wtns });
    return { proof, publicSignals };
  }

  /** snarkjs.groth16.verify(vk, publicSignals, proof), by snarkjs (an optional peer dependency: install it). */
  async verify(vk: object, publicSignals: PublicSignals, proof: Groth16Proof): Promise<boolean> {
    let snarkjs: { groth16: { verify: (...a: unknown[]) => Promise<boolean> } };
    try {
      snarkjs = await import("snarkjs" as string);
    } catch {
      throw new SnarkdError("verify needs snarkjs (npm install snarkjs); the daemon verifies every proof it " +
        "returns unless its [pipeline] self_verify is off");
    }
    return snarkjs.groth16.verify(vk, publicSignals, proof);
  }
}

export class Snarkd {
  readonly address: string;
  readonly groth16: Groth16;
  private readonly client: ProverClient;
  private readonly metadata: grpc.Metadata;
  private readonly timeoutMs: number;
  private readonly callTimeoutMs: number;
  private readonly retries: number;

  constructor(opts: ConnectOptions) {
    if (!opts || typeof opts !== "object") throw new InputError("connect: options { address, ... } are required");
    this.address = target(opts.address);
    this.timeoutMs = opts.timeoutMs ?? 600_000;
    this.callTimeoutMs = opts.callTimeoutMs ?? 30_000;
    this.retries = opts.retries ?? 2;
    const token = readToken(opts);
    this.metadata = new grpc.Metadata();
    if (token) this.metadata.set("authorization", `Bearer ${token}`);
    const max = opts.maxMessageBytes ?? 512 * 1024 * 1024;
    const channelOptions: grpc.ClientOptions = {
      "grpc.max_receive_message_length": max,
      "grpc.max_send_message_length": max,
      // Reconnect soon after a daemon restarts (gRPC's default waits 1 s, then up to 2 minutes).
      "grpc.initial_reconnect_backoff_ms": 250,
      "grpc.max_reconnect_backoff_ms": 5000,
    };
    let credentials: grpc.ChannelCredentials;
    if (opts.tls) {
      const t: TlsOptions = opts.tls === true ? {} : opts.tls;
      if ((t.cert === undefined) !== (t.key === undefined)) {
        throw new InputError("tls: cert and key go together", -1, undefined, "tls");
      }
      credentials = grpc.credentials.createSsl(pem(t.ca, "ca"), pem(t.key, "key"), pem(t.cert, "cert"));
      if (t.serverName) channelOptions["grpc.ssl_target_name_override"] = t.serverName;
    } else {
      credentials = grpc.credentials.createInsecure();
    }
    const Prover = proverClass();
    this.client = new Prover(this.address, credentials, channelOptions);
    this.groth16 = new Groth16(this);
  }

  /** Wait until the channel is ready (connected, TLS handshake done). */
  ready(timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      this.client.waitForReady(Date.now() + timeoutMs, (err?: Error) => {
        if (!err) return resolve();
        reject(new UnavailableError(`cannot reach snarkd at ${this.address} within ${timeoutMs} ms: ${err.message}`,
          grpc.status.UNAVAILABLE, err.message));
      });
    });
  }

  close(): void {
    this.client.close();
  }

  // -- plumbing ---------------------------------------------------------------------------

  private deadline(opts: CallOptions | undefined, fallbackMs: number): { deadline: Date; ms: number } {
    if (opts?.deadline !== undefined) {
      const at = opts.deadline instanceof Date ? opts.deadline.getTime() : Number(opts.deadline);
      if (!Number.isFinite(at)) throw new InputError("deadline: not a Date or epoch milliseconds", -1, undefined, "deadline");
      return { deadline: new Date(at), ms: at - Date.now() };
    }
    const ms = opts?.timeoutMs ?? fallbackMs;
    if (!(ms > 0)) throw new InputError("timeoutMs: must be a positive number", -1, undefined, "timeoutMs");
    return { deadline: new Date(Date.now() + ms), ms };
  }

  private unary(method: string, request: object, deadline: Date, ms: number): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.client[method](request, this.metadata, { deadline }, (err: grpc.ServiceError | null, reply: Reply) => {
        if (err) reject(fromGrpc(err, this.address, ms));
        else resolve(reply);
      });
    });
  }

  private stream(method: string, head: object, data: Uint8Array[], deadline: Date, ms: number): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const call = this.client[method](this.metadata, { deadline }, (err: grpc.ServiceError | null, reply: Reply) => {
        if (err) reject(fromGrpc(err, this.address, ms));
        else resolve(reply);
      }) as grpc.ClientWritableStream<object>;
      const messages = (function* () {
        yield { request: head, partition_bytes: data.map((d) => d.length) };
        for (const d of data) {
          for (let i = 0; i < d.length; i += CHUNK) yield { data: d.subarray(i, i + CHUNK) };
        }
      })();
      const pump = () => {
        for (let m = messages.next(); !m.done; m = messages.next()) {
          if (!call.write(m.value)) {
            call.once("drain", pump);  // gRPC's buffer is full: go on once it has sent some
            return;
          }
        }
        call.end();
      };
      pump();
    });
  }

  /** `call()`, again while the daemon is unreachable (UNAVAILABLE), `retries` times at most, before the
   * deadline: only for calls that are safe to repeat. */
  private async retrying<T>(deadline: Date, call: (attempt: number) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call(attempt);
      } catch (err) {
        const pause = 250 * 2 ** attempt;
        if (!(err instanceof UnavailableError) || attempt >= this.retries || Date.now() + pause >= deadline.getTime()) {
          throw err;
        }
        await sleep(pause);
      }
    }
  }

  /** The call's deadline for a job's prove / submit: timeoutMs, else (prove) the job's deadline and a grace
   * for the daemon's answer, else the default. */
  private jobCallDeadline(spec: JobSpec, job: { at: number } | null, waits: boolean): { deadline: Date; ms: number } {
    if (spec?.timeoutMs === undefined && job !== null && waits) {
      const ms = Math.max(job.at - Date.now(), 0) + DEADLINE_GRACE_MS;
      return { deadline: new Date(Date.now() + ms), ms };
    }
    return this.deadline({ timeoutMs: spec?.timeoutMs }, waits ? this.timeoutMs : this.callTimeoutMs);
  }

  /** The request's deadline fields now: a relative deadline as what is left of it (so a retry does not extend
   * it; never 0, which would be none). */
  private static deadlineFields(job: { at: number; absolute: boolean } | null): Reply {
    if (job === null) return {};
    if (job.absolute) return { deadline_unix: job.at / 1000 };
    return { deadline_s: Math.max((job.at - Date.now()) / 1000, 0.001) };
  }

  private async request(spec: JobSpec, jobId: string): Promise<{ head: Reply; data: Uint8Array[] | null }> {
    if (!spec || typeof spec !== "object") throw new InputError("the job: expected { key, input | wtns, ... }");
    const head: Reply = {
      key_id: checkKeyId(spec.key),
      job_id: jobId,
      priority: spec.priority ?? 0,
      batch_verify: Boolean(spec.batchVerify),
      lane: spec.lane ?? "",
    };
    if (typeof head.lane !== "string") throw new InputError("lane: a lane name (a string)", -1, undefined, "lane");
    if (!Number.isInteger(head.priority) || Math.abs(head.priority) > 2 ** 31 - 1) {
      throw new InputError("priority: must be a 32-bit integer", -1, undefined, "priority");
    }
    if ((spec.input === undefined) === (spec.wtns === undefined)) {
      throw new InputError("the job needs input (the circuit's inputs) or wtns (a witness), and not both");
    }
    if (spec.input !== undefined) {
      const list = Array.isArray(spec.input) ? spec.input : [spec.input];
      if (list.length === 0) throw new InputError("input: an empty list of inputs", -1, undefined, "input");
      head.inputs_json = list.map((x, i) => inputsJson(x, list.length > 1 ? `input[${i}]` : "the inputs"));
      return { head, data: null };
    }
    const sources = Array.isArray(spec.wtns) ? spec.wtns : [spec.wtns as WitnessSource];
    if (sources.length === 0) throw new InputError("wtns: an empty list of witnesses", -1, undefined, "wtns");
    const data = await Promise.all(sources.map((s, i) => witnessBytes(s, sources.length > 1 ? `wtns[${i}]` : "wtns")));
    return { head, data };
  }

  private streamed(spec: JobOptions, data: Uint8Array[]): boolean {
    const way = spec.transport ?? "auto";
    if (!["auto", "inline", "stream"].includes(way)) {
      throw new InputError(`transport: '${way}' is not auto, inline or stream`, -1, undefined, "transport");
    }
    return way === "stream" || (way === "auto" && data.reduce((n, d) => n + d.length, 0) > INLINE_MAX);
  }

  /** One try of Prove or Submit: by path (no data), inline, or streamed (streamed()). */
  private sendJob(rpc: "Prove" | "Submit", spec: JobOptions, head: Reply, data: Uint8Array[] | null, deadline: Date,
                  ms: number): Promise<Reply> {
    if (data === null) return this.unary(rpc, head, deadline, ms);
    if (this.streamed(spec, data)) return this.stream(`${rpc}Stream`, head, data, deadline, ms);
    return this.unary(rpc, { ...head, witnesses: data }, deadline, ms);
  }

  // -- jobs ---------------------------------------------------------------------------------

  /** Prove and wait: one job (see JobSpec), its proofs. A job that outlives the call's deadline goes on in the
   * daemon: the DeadlineError (`kind` "call") carries its jobId for `await`; one refused or expired for its own
   * `deadline` is a DeadlineError of `kind` "refused" or "expired". */
  async prove(spec: JobSpec): Promise<ProveResult> {
    const jobId = spec?.jobId !== undefined ? checkJobId(spec.jobId) : newJobId();
    const job = jobDeadline(spec?.deadline);
    const { deadline, ms } = this.jobCallDeadline(spec, job, true);
    const { head: first, data } = await this.request(spec, jobId);
    try {
      // The job is named, so a retry is safe: a daemon that did get the first try answers ALREADY_EXISTS.
      const reply = await this.retrying(deadline, async (attempt) => {
        const head = { ...first, ...Snarkd.deadlineFields(job) };
        try {
          return await this.sendJob("Prove", spec, head, data, deadline, ms);
        } catch (err) {
          if (attempt > 0 && err instanceof InputError && err.code === grpc.status.ALREADY_EXISTS) {
            return null;  // our earlier try reached the daemon: fetch its result
          }
          throw err;
        }
      });
      return reply === null ? await this.await(jobId, { deadline }) : proveResult(reply);
    } catch (err) {
      if (err instanceof SnarkdError) err.jobId = jobId;
      throw err;
    }
  }

  /** Queue a job; its id at once. */
  async submit(spec: JobSpec): Promise<string> {
    const jobId = spec?.jobId !== undefined ? checkJobId(spec.jobId) : newJobId();
    const job = jobDeadline(spec?.deadline);
    const { deadline, ms } = this.jobCallDeadline(spec, job, false);
    const { head: first, data } = await this.request(spec, jobId);
    try {
      return await this.retrying(deadline, async (attempt) => {
        const head = { ...first, ...Snarkd.deadlineFields(job) };
        try {
          return (await this.sendJob("Submit", spec, head, data, deadline, ms)).job_id as string;
        } catch (err) {
          if (attempt > 0 && err instanceof InputError && err.code === grpc.status.ALREADY_EXISTS) return jobId;
          throw err;
        }
      });
    } catch (err) {
      if (err instanceof SnarkdError) err.jobId = jobId;
      throw err;
    }
  }

  /** Wait for a job to end; its proofs. Throws JobFailedError (FAILED: the daemon's reason, the input it
   * names), CancelledError (CANCELLED), DeadlineError (still running at the deadline: it goes on; or EXPIRED: the
   * job's server-side deadline, set by another client, passed and it ended without a proof). */
  async await(jobId: string, opts?: CallOptions): Promise<ProveResult> {
    checkJobId(jobId);
    const { deadline, ms } = this.deadline(opts, this.timeoutMs);
    // The daemon waits up to timeout_s, then answers TIMEOUT: asked to stop a little before our deadline
    // (at most 60 s a call, so a dropped connection is noticed), it answers rather than the call being cut.
    for (;;) {
      const left = deadline.getTime() - Date.now();
      if (left <= 0) {
        const err = new DeadlineError(`job ${jobId} had not ended within ${ms} ms`, grpc.status.DEADLINE_EXCEEDED,
          undefined, "call");
        err.jobId = jobId;
        throw err;
      }
      const waitS = Math.max(0.05, Math.min(60, (left - 250) / 1000));
      const r = await this.retrying(deadline, () => this.unary("Await", { job_id: jobId, timeout_s: waitS },
        new Date(Date.now() + waitS * 1000 + 5000), waitS * 1000 + 5000));
      if (r.state === "COMPLETED") return proveResult(r.result);
      if (r.state === "FAILED") throw new JobFailedError(jobId, r.error);
      if (r.state === "CANCELLED") {
        const err = new CancelledError(`job ${jobId}: ${r.error || "cancelled"}`, -1, r.error);
        err.jobId = jobId;
        throw err;
      }
      if (r.state === "EXPIRED") {
        const err = new DeadlineError(`job ${jobId}: ${r.error || "expired"}`, grpc.status.DEADLINE_EXCEEDED,
          r.error || "expired", "expired");
        err.jobId = jobId;
        throw err;
      }
    }
  }

  /** A job's state now (QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, EXPIRED), without waiting. */
  async jobState(jobId: string, opts?: CallOptions): Promise<{ state: JobState; error: string }> {
    checkJobId(jobId);
    const { deadline, ms } = this.deadline(opts, this.callTimeoutMs);
    const r = await this.retrying(deadline, () => this.unary("Await", { job_id: jobId, timeout_s: 0.001 }, deadline, ms));
    // TIMEOUT here means "not ended": the daemon's error says which of queued / running.
    const state = r.state === "TIMEOUT" ? (/running/.test(r.error) ? "RUNNING" : "QUEUED") : r.state;
    return { state, error: r.state === "TIMEOUT" ? "" : r.error };
  }

  /** Cancel a job: its state after the request, and whether this call cancelled it (false: it had ended). */
  async cancel(jobId: string, opts?: CallOptions): Promise<{ state: JobState; cancelled: boolean }> {
    checkJobId(jobId);
    const { deadline, ms } = this.deadline(opts, this.callTimeoutMs);
    const r = await this.retrying(deadline, () => this.unary("Cancel", { job_id: jobId }, deadline, ms));
    return { state: r.state, cancelled: r.cancelled };
  }

  /** The caller's jobs (an admin token's: everyone's, with `client`), newest first: those the daemon holds
   * (unfinished, and its last finished) and, with its journal on, finished ones it keeps for [daemon]
   * result_retention. Another token's jobs are never listed. */
  async listJobs(opts: ListJobsOptions = {}): Promise<JobInfo[]> {
    if (!opts || typeof opts !== "object") throw new InputError("listJobs: expected { states, keyId, limit }");
    const given = opts.states === undefined ? [] : Array.isArray(opts.states) ? opts.states : [opts.states];
    const states = given.map((st, i) => {
      const name = typeof st === "string" ? st.trim().toUpperCase() : "";
      if (!(JOB_STATES as readonly string[]).includes(name)) {
        throw new InputError(`states[${i}]: ${JSON.stringify(st)} is not one of ${JOB_STATES.join(" ")}`, -1,
          undefined, "states");
      }
      return name;
    });
    const keyId = opts.keyId ?? "";
    if (typeof keyId !== "string") throw new InputError("keyId: a key id (a string)", -1, undefined, "keyId");
    const limit = opts.limit ?? 0;
    if (!Number.isInteger(limit) || limit < 0 || limit > 2 ** 32 - 1) {
      throw new InputError("limit: must be an integer >= 0 (0: all)", -1, undefined, "limit");
    }
    const lane = opts.lane ?? "";
    if (typeof lane !== "string") throw new InputError("lane: a lane name (a string)", -1, undefined, "lane");
    const { deadline, ms } = this.deadline(opts, this.callTimeoutMs);
    const r = await this.retrying(deadline, () =>
      this.unary("ListJobs", { states, key_id: keyId, limit, lane }, deadline, ms));
    return (r.jobs ?? []).map(jobInfo);
  }

  // -- aggregation, keys, status ----------------------------------------------------------------

  /** One SnarkPack aggregate of n = 2^k proofs of one key: of finished jobs, or given. */
  async aggregate(spec: AggregateSpec): Promise<AggregateResult> {
    const key = checkKeyId(spec?.key);
    const text = (x: unknown) => (typeof x === "string" ? x : JSON.stringify(x));
    const jobIds = (spec.jobIds ?? []).map((j, i) => checkJobId(j, `jobIds[${i}]`));
    const proofs = (spec.proofs ?? []).map((p) => ({ proof_json: text(p.proof), public_json: text(p.publicSignals) }));
    if ((jobIds.length > 0) === (proofs.length > 0)) {
      throw new InputError("aggregate: give jobIds or proofs (one of them, not empty)", -1, undefined, "jobIds");
    }
    const { deadline, ms } = this.deadline(spec, this.timeoutMs);
    const r = await this.unary("Aggregate", { key_id: key, srs_path: spec.srsPath ?? "", job_ids: jobIds, proofs },
      deadline, ms);
    return { aggregateJson: r.aggregate_json, n: r.n, devSrs: r.dev_srs, timingsMs: { ...(r.timings_ms ?? {}) } };
  }

  /** Load a .zkey under an id (an admin token's call; the path under the daemon's key directories). */
  async loadKey(keyId: string, path: string, opts?: CallOptions & { wasm?: string }): Promise<KeyInfo> {
    checkKeyId(keyId);
    const { deadline, ms } = this.deadline(opts, this.timeoutMs);
    const r = await this.unary("LoadKey", { key_id: keyId, path, wasm_path: opts?.wasm ?? "" }, deadline, ms);
    return r.key as KeyInfo;
  }

  /** Drop a key (jobs already queued on it still finish). */
  async unloadKey(keyId: string, opts?: CallOptions): Promise<KeyInfo> {
    checkKeyId(keyId);
    const { deadline, ms } = this.deadline(opts, this.callTimeoutMs);
    const r = await this.unary("UnloadKey", { key_id: keyId }, deadline, ms);
    return r.key as KeyInfo;
  }

  /** The daemon's StatusReply, as the proto names its fields (keys, queued, in_flight, completed, ...). */
  async status(opts?: CallOptions): Promise<Record<string, any>> {
    const { deadline, ms } = this.deadline(opts, this.callTimeoutMs);
    return this.retrying(deadline, () => this.unary("Status", {}, deadline, ms));
  }
}

/** A client for the daemon at `address`, once its channel is ready (connected; TLS handshake done). */
export async function connect(opts: ConnectOptions): Promise<Snarkd> {
  const sd = new Snarkd(opts);
  try {
    await sd.ready(opts.connectTimeoutMs ?? 10_000);
  } catch (err) {
    sd.close();
    throw err;
  }
  return sd;
}
