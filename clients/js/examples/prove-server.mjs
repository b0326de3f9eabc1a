// An HTTP endpoint that proves on request, as an app's backend or a relayer would:
//   POST /prove/<key id>   body: the circuit's inputs as JSON   ->  200 { proof, publicSignals }
// Bad inputs are 400 with the field at fault, an unknown key 404, an unreachable daemon 503.
//
//   SNARKD_ADDRESS=127.0.0.1:9820 PORT=8080 node examples/prove-server.mjs
//   curl -d '{"x": "3", "k": "7"}' localhost:8080/prove/chain
//
// (node:http keeps the example free of dependencies; an Express handler has the same body.)
import { createServer } from "node:http";
import { connect, InputError, NotFoundError, PermissionError, SnarkdError, UnavailableError } from "snarkd-client";

const sd = await connect({
  address: process.env.SNARKD_ADDRESS ?? "127.0.0.1:9820",
  token: process.env.SNARKD_TOKEN,          // when the daemon has a token_file
  tls: process.env.SNARKD_TLS_CA ? { ca: process.env.SNARKD_TLS_CA } : undefined,
  timeoutMs: 60_000,
});

function reply(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readJson(req, limit = 1 << 20) {
  let text = "";
  for await (const chunk of req) {
    text += chunk;
    if (text.length > limit) throw new InputError(`the request body is larger than ${limit} bytes`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new InputError("the request body is not JSON");
  }
}

const server = createServer(async (req, res) => {
  const route = /^\/prove\/([A-Za-z0-9_.:-]+)$/.exec(req.url ?? "");
  if (req.method !== "POST" || !route) return reply(res, 404, { error: "POST /prove/<key id>" });
  try {
    const { proof, publicSignals } = await sd.groth16.fullProve(await readJson(req), route[1]);
    reply(res, 200, { proof, publicSignals });
  } catch (err) {
    if (!(err instanceof SnarkdError)) throw err;
    const status = err instanceof NotFoundError ? 404 : err instanceof InputError ? 400
      : err instanceof PermissionError ? 403 : err instanceof UnavailableError ? 503 : 500;
    reply(res, status, { error: err.details, field: err.field, code: err.codeName, jobId: err.jobId });
  }
});

server.listen(Number(process.env.PORT ?? 8080), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => server.close(() => { sd.close(); process.exit(0); }));
}
