export { connect, Snarkd, Groth16, JobFailedError, checkJobId, jobDeadline, JOB_STATES } from "./client.js";
export type {
  AggregateResult, AggregateSpec, CallOptions, ConnectOptions, Groth16Proof, JobDeadline, JobInfo, JobOptions, JobSpec,
  JobState, KeyInfo, ListedJobState, ListJobsOptions, PartitionResult, Pem, ProveResult, PublicSignals, TlsOptions,
} from "./client.js";
export type { DeadlineKind } from "./errors.js";
export {
  AuthenticationError, CancelledError, DeadlineError, InputError, InternalError, NotFoundError, PermissionError,
  SnarkdError, UnavailableError,
} from "./errors.js";
export { checkInputs, inputsJson, MAX_INPUT_DEPTH } from "./inputs.js";
export type { CircuitInputs, SignalValue } from "./inputs.js";
export type { WitnessSource } from "./wtns.js";
