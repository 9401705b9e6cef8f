import { createCapabilityRegistry, agentProcedure } from "@orpc-agent/core";
import { os, call } from "@orpc/server";
import * as z from "zod";
const base = agentProcedure(os.$context());
const withUser = os.middleware(async ({ next }) => next({ context: { user: "u1" } }));
const p = base.use(withUser).meta({ agent: { description: "x", expose: { direct: true }, sideEffect: "read", risk: "low" } })
  .input(z.object({ query: z.string().min(2), limit: z.number().int().max(50).default(10) })).handler(async ({input}) => input);
const reg = await createCapabilityRegistry({ p });
const input = { query: "alice", limit: 5 }; const frame = { surface: "direct", context: {} };
const mode = process.argv[2];
const t0 = Date.now(); let n = 0;
while (Date.now() - t0 < 3000) { for (let i = 0; i < 1000; i++) mode === "bare" ? await call(p, input, {context: {}}) : await reg.invoke("p", input, frame); n += 1000; }
console.log(mode, (3000e3 / n).toFixed(2), "us/op");
