// The daemon's gRPC service, from the descriptor that the build generates from proto/snarkd/v1/snarkd.proto.
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { SNARKD_PROTO_JSON } from "./generated/descriptor.js";

export type ProverClient = grpc.Client & Record<string, Function>;
type ProverConstructor = new (address: string, credentials: grpc.ChannelCredentials,
                              options?: grpc.ClientOptions) => ProverClient;

let prover: ProverConstructor | undefined;

/** The generated client class of snarkd.v1.Prover (made once per process). */
export function proverClass(): ProverConstructor {
  if (prover === undefined) {
    const definition = protoLoader.fromJSON(SNARKD_PROTO_JSON as never, {
      keepCase: true,   // fields as the proto names them: key_id, inputs_json, proof_json ...
      longs: Number,    // uint64 counts and sizes: far below 2^53
      enums: String,    // JobState as "COMPLETED" ...
      defaults: true,
      oneofs: true,
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      snarkd: { v1: { Prover: ProverConstructor } };
    };
    prover = loaded.snarkd.v1.Prover;
  }
  return prover;
}
