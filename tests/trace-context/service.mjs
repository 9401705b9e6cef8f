// The test service the W3C Trace Context harness drives (harness/README in
// w3c/trace-context: test/README.md), built on the Node package's traceOf and
// traceHeaders. The harness POSTs a JSON list of {url, arguments}; for each
// element the service POSTs `arguments` to `url`, with the trace context it
// propagates:
//
// - traceOf(rawHeaders) reads the request's traceparent/tracestate through
//   the core's parser (raw headers, so a repeated header stays repeated);
// - a valid context continues: same trace-id, a new parent-id per outgoing
//   request, version 00, and only the flags version 00 defines (sampled 01,
//   random 02); the tracestate goes on as the core kept it;
// - no or an invalid context starts a new trace (random ids, so the random
//   flag is set) with no tracestate;
// - traceHeaders() writes the outgoing headers.
//
// It listens on 127.0.0.1 (port SERVICE_PORT, default: any free one) and
// prints one line `listening <url>` once it accepts connections; run.py
// waits for that line.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";

import { traceHeaders, traceOf } from "../../bindings-node/dist/index.js";

const CALLBACK_TIMEOUT_MS = 5000;

function randomHex(bytes) {
  for (;;) {
    const hex = randomBytes(bytes).toString("hex");
    if (!/^0+$/.test(hex)) return hex;
  }
}

/** The trace context of one outgoing request, continuing `trace` if there is one. */
function outgoing(trace) {
  if (trace === undefined) return { traceparent: `00-${randomHex(16)}-${randomHex(8)}-02` };
  const [, traceId, , flags] = trace.traceparent.split("-");
  const known = (Number.parseInt(flags, 16) & 0x03).toString(16).padStart(2, "0");
  return { traceparent: `00-${traceId}-${randomHex(8)}-${known}`, tracestate: trace.tracestate };
}

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const server = createServer(async (req, res) => {
  try {
    const text = await body(req);
    const actions = text === "" ? [] : JSON.parse(text);
    const trace = traceOf(req.rawHeaders);
    for (const action of Array.isArray(actions) ? actions : []) {
      const answer = await fetch(action.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...traceHeaders(outgoing(trace)) },
        body: JSON.stringify(action.arguments ?? []),
        signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
      });
      await answer.arrayBuffer();
    }
    res.writeHead(200, { "content-type": "application/json" }).end('"ok"');
  } catch (error) {
    res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify(String(error)));
  }
});

server.listen(Number(process.env.SERVICE_PORT ?? 0), "127.0.0.1", () => {
  const { port } = server.address();
  console.log(`listening http://127.0.0.1:${port}/test`);
});

for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => server.close(() => process.exit(0)));
