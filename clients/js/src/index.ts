export { connect, Snarkd, Groth16, JobFailedError, checkJobId } from "./client.js";
export type {
  AggregateResult, AggregateSpec, CallOptions, ConnectOptions, Groth16Proof, JobOptions, JobSpec, JobState, KeyInfo,
  PartitionResult, Pem, ProveResult, PublicSignals, TlsOptions,
} from "./client.js";
export {
  AuthenticationError, CancelledError, DeadlineError, InputError, InternalError, NotFoundError, PermissionError,
  SnarkdError, UnavailableError,
} from "./errors.js";
export { checkInputs, inputsJson, MAX_INPUT_DEPTH } from "./inputs.js";
export type { CircuitInputs, SignalValue } from "./inputs.js";
export type { WitnessSource } from "./wtns.js";
