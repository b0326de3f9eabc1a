// Witnesses as snarkjs takes them: a .wtns file's bytes, its path, or snarkjs's in-memory file
// object ({ type: "mem", data }).
import { readFile } from "node:fs/promises";
import { InputError } from "./errors.js";

export type WitnessSource = Uint8Array | ArrayBuffer | string | { type: "mem"; data: Uint8Array };

const MAGIC = [0x77, 0x74, 0x6e, 0x73];  // "wtns"

/** The .wtns bytes of a witness source; InputError naming `what` when it is no .wtns file. */
export async function witnessBytes(source: WitnessSource, what = "wtns"): Promise<Uint8Array> {
  let data: Uint8Array;
  if (typeof source === "string") {
    try {
      data = await readFile(source);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new InputError(`${what}: cannot read witness file ${source}: ${e.code ?? e.message}`, -1, undefined, what);
    }
  } else if (source instanceof Uint8Array) {
    data = source;
  } else if (source instanceof ArrayBuffer) {
    data = new Uint8Array(source);
  } else if (source && typeof source === "object" && (source as { type?: string }).type === "mem"
             && (source as { data?: unknown }).data instanceof Uint8Array) {
    data = (source as { data: Uint8Array }).data;
  } else {
    throw new InputError(`${what}: expected a .wtns file's bytes (Buffer, Uint8Array), its path, or { type: "mem", data }`,
      -1, undefined, what);
  }
  if (data.length < 12 || MAGIC.some((b, i) => data[i] !== b)) {
    throw new InputError(`${what}: not a .wtns file (no "wtns" header)`, -1, undefined, what);
  }
  return data;
}
