// Errors as typed classes: each carries the gRPC status code (number and name) and the daemon's own
// message, and, where the request named a job, its id (a job may go on in the daemon after its caller's
// deadline: `await` fetches it by that id).
import { status as GrpcStatus } from "@grpc/grpc-js";
import { SNARKD_PROTO_JSON } from "./generated/descriptor.js";

export type GrpcCodeName = keyof typeof GrpcStatus;

function codeName(code: number): string {
  const entry = Object.entries(GrpcStatus).find(([, v]) => v === code);
  return entry ? entry[0] : `CODE_${code}`;
}

/** Base of every error this client throws. */
export class SnarkdError extends Error {
  /** gRPC status code (`status.INVALID_ARGUMENT` ...); -1 for errors found before anything was sent. */
  readonly code: number;
  /** The code's name ("INVALID_ARGUMENT"), or "CLIENT" for errors found before anything was sent. */
  readonly codeName: string;
  /** The daemon's message (or the client's, for errors found before sending). */
  readonly details: string;
  /** The job the call was about, when it named one. */
  jobId?: string;
  /** The daemon's error kind ("input", "not_found", "busy", ...: the table in the daemon's docs/errors.md),
   * from its `snarkd-error-kind` trailer; undefined when the status came without one (the transport's own). */
  errorKind?: string;

  constructor(message: string, code = -1, details = message) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.codeName = code < 0 ? "CLIENT" : codeName(code);
    this.details = details;
  }
}

/** The request is wrong: bad inputs or witness, unknown key or job, a limit passed. `field` names the
 * input signal or request field at fault when the message names one. */
export class InputError extends SnarkdError {
  readonly field?: string;
  constructor(message: string, code = -1, details = message, field?: string) {
    super(message, code, details);
    this.field = field ?? fieldOf(details);
  }
}

/** No such key or job (or another token's job: the daemon answers those the same way). */
export class NotFoundError extends InputError {}

/** The daemon refused the caller: no token or a wrong one (UNAUTHENTICATED). */
export class AuthenticationError extends SnarkdError {}

/** The caller's token lacks the role (a `prove` token asking for LoadKey), or a path outside the
 * daemon's key directories (PERMISSION_DENIED). */
export class PermissionError extends SnarkdError {}

/** The daemon could not be reached, is draining, or the TLS handshake failed (UNAVAILABLE). */
export class UnavailableError extends SnarkdError {}

/** Why a DeadlineError was thrown: "call": this client's own deadline for the call passed (a named job goes
 * on in the daemon); "refused": the daemon refused the job at submit, its completion estimate passing the job's
 * deadline (or the deadline had passed already); "expired": the job's deadline passed in the daemon and it ended
 * EXPIRED without a proof. */
export type DeadlineKind = "call" | "refused" | "expired";

/** DEADLINE_EXCEEDED: no reply within the call's deadline (`kind` "call"; a named job goes on in the daemon), or
 * the job's server-side deadline (`deadline` of prove / submit): refused at submit (`kind` "refused", the daemon's
 * estimate in `details` and `estimateS`) or passed (`kind` "expired", the daemon's reason in `details`). */
export class DeadlineError extends SnarkdError {
  readonly kind: DeadlineKind;
  /** For "refused": the daemon's estimate of when the job would end, in seconds from submit, when it had one
   * (none for a key with no proof measured yet, whose jobs are refused only for a deadline already past). */
  readonly estimateS?: number;
  constructor(message: string, code = -1, details = message, kind?: DeadlineKind) {
    super(message, code, details);
    this.kind = kind ?? deadlineKind(details);
    const est = /estimated ([0-9.e+-]+)s/.exec(details);
    if (this.kind === "refused" && est && Number.isFinite(Number(est[1]))) this.estimateS = Number(est[1]);
  }
}

/** What a DEADLINE_EXCEEDED's message says: the daemon's refusal or expiry, else the call's own deadline. */
function deadlineKind(details: string): DeadlineKind {
  if (/^deadline: the job cannot finish in time/.test(details)) return "refused";
  if (/(^|: )expired: /.test(details)) return "expired";
  return "call";
}

/** The job was cancelled (by `cancel`, or because the daemon stopped it), or a key file changed under it. */
export class CancelledError extends SnarkdError {}

/** The daemon failed in a way that is not the request's fault (INTERNAL, UNKNOWN, ...). */
export class InternalError extends SnarkdError {}

/** Where the daemon's message names an input signal or a request field, that name. */
export function fieldOf(message: string): string | undefined {
  const input = /input '([^']+)'/.exec(message);
  if (input) return input[1];
  const missing = /missing input signals? '([^']+)'/.exec(message);
  if (missing) return missing[1];
  // "key_id: the request names no key", "proofs[2]: ...": a message led by one of the API's field names
  // (not any word before a colon: "cancelled: the client went away" names no field).
  const lead = /^([a-z_]+)(\[\d+\])?: /.exec(message);
  if (lead && requestFields().has(lead[1])) return lead[1] + (lead[2] ?? "");
  return undefined;
}

let fieldNames: Set<string> | undefined;

/** The field names of the API's requests (the messages its RPCs take, and those they hold), from the
 * descriptor generated from the proto. */
function requestFields(): Set<string> {
  if (fieldNames === undefined) {
    const messages = new Map<string, Record<string, { type: string }>>();
    const requests: string[] = [];
    const walk = (ns: any) => {
      for (const [name, item] of Object.entries<any>(ns?.nested ?? {})) {
        if (item.fields) messages.set(name, item.fields);
        for (const m of Object.values<any>(item.methods ?? {})) requests.push(m.requestType);
        walk(item);
      }
    };
    walk(SNARKD_PROTO_JSON);
    fieldNames = new Set();
    const seen = new Set<string>();
    while (requests.length > 0) {
      const name = requests.pop()!.split(".").pop()!;
      if (seen.has(name) || !messages.has(name)) continue;
      seen.add(name);
      for (const [field, { type }] of Object.entries(messages.get(name)!)) {
        fieldNames.add(field);
        requests.push(type);  // a message field's own fields (ProveChunk.request, AggregateRequest.proofs)
      }
    }
  }
  return fieldNames;
}

/** The trailer the daemon names an error's kind in (its error model: one kind, one gRPC code, one exit code). */
export const KIND_TRAILER = "snarkd-error-kind";

/** The typed error for a gRPC failure, with the daemon's error kind when its trailer has one. */
export function fromGrpc(err: { code?: number; details?: string; message?: string;
                                metadata?: { get(key: string): unknown[] } }, address: string,
                         timeoutMs?: number): SnarkdError {
  const e = byCode(err, address, timeoutMs);
  const kind = err.metadata?.get(KIND_TRAILER)?.[0];
  if (typeof kind === "string" && kind) e.errorKind = kind;
  return e;
}

function byCode(err: { code?: number; details?: string; message?: string }, address: string,
                timeoutMs?: number): SnarkdError {
  const code = typeof err.code === "number" ? err.code : GrpcStatus.UNKNOWN;
  const details = err.details ?? err.message ?? "";
  switch (code) {
    case GrpcStatus.INVALID_ARGUMENT:
    case GrpcStatus.ALREADY_EXISTS:
    case GrpcStatus.FAILED_PRECONDITION:
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return new InputError(details, code, details);
    case GrpcStatus.NOT_FOUND:
      return new NotFoundError(details, code, details);
    case GrpcStatus.UNAUTHENTICATED:
      return new AuthenticationError(`snarkd at ${address} refused the call: ${details}`, code, details);
    case GrpcStatus.PERMISSION_DENIED:
      return new PermissionError(details, code, details);
    case GrpcStatus.UNAVAILABLE:
      return new UnavailableError(`cannot reach snarkd at ${address}: ${details}`, code, details);
    case GrpcStatus.DEADLINE_EXCEEDED:
      // The daemon's own (a job refused for its deadline, or expired) says why; gRPC's for the call's deadline
      // is "Deadline exceeded ...".
      if (details && !/^deadline exceeded/i.test(details)) {
        return new DeadlineError(`snarkd at ${address}: ${details}`, code, details);
      }
      return new DeadlineError(`no reply from snarkd at ${address}` +
        (timeoutMs !== undefined ? ` within ${timeoutMs} ms` : "") + `: ${details}`, code, details, "call");
    case GrpcStatus.CANCELLED:
    case GrpcStatus.ABORTED:
      return new CancelledError(`snarkd at ${address}: ${details || codeName(code).toLowerCase()}`, code, details);
    default:
      return new InternalError(`snarkd at ${address}: ${codeName(code)}: ${details}`, code, details);
  }
}
