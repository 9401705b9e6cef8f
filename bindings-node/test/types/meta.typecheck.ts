// Compile-time checks (tsc --noEmit -p tsconfig.test.json, part of
// `make lint-node`): `.meta({ agent })` is typed by agentProcedure, and the
// public API's shapes hold. Each @ts-expect-error must stay an error.
import { os } from "@orpc/server";
import * as z from "zod";

import {
  agentProcedure,
  CapabilityError,
  createCapabilityRegistry,
  type AgentMeta,
  type Frame,
  type InvokeResult,
} from "@orpc-agent/core";

type AppContext = { db: { find(q: string): string[] } };
const base = agentProcedure(os.$context<AppContext>());

export const search = base
  .meta({ agent: { description: "Search.", expose: { mcp: true }, sideEffect: "read", risk: "low" } })
  .input(z.object({ q: z.string() }))
  .handler(async ({ input, context, signal }) => {
    const s: AbortSignal | undefined = signal;
    void s;
    return context.db.find(input.q);
  });

// @ts-expect-error sideEffect must be one of the spec's values
base.meta({ agent: { description: "x", expose: {}, sideEffect: "maybe", risk: "low" } });
// @ts-expect-error unknown surface key
base.meta({ agent: { description: "x", expose: { email: true }, sideEffect: "read", risk: "low" } });
// @ts-expect-error risk is required
base.meta({ agent: { description: "x", expose: {}, sideEffect: "read" } });

const meta: AgentMeta<AppContext> = {
  description: "Redacted.",
  expose: { aiSdk: true },
  sideEffect: "read",
  risk: "high",
  redact: { output: (o, info) => (info.surface === "mcp" ? { ...(o as object), secret: undefined } : o) },
  policies: [
    { name: "big", when: { input: ["/amount > 1000"] }, decision: "requireApproval" },
    (req) => (req.frame.actor.roles?.includes("admin") ? { decision: "allow" } : { decision: "abstain" }),
  ],
};
void meta;

export async function use(): Promise<void> {
  const registry = await createCapabilityRegistry<AppContext>({ search }, { approvalStore: { sqlite: "/tmp/x.db" } });
  const frame: Frame<AppContext> = { surface: "mcp", context: { db: { find: () => [] } }, actor: { id: "a" } };
  const r: InvokeResult = await registry.invoke("search", { q: "x" }, frame);
  if (r.status === "approval_required") {
    const id: string = r.request.id;
    await registry.approvals.approve(id, { approver: "boss" });
    await registry.resume(id, { context: frame.context });
  }
  // @ts-expect-error a frame needs a surface
  await registry.invoke("search", {}, {});
  const e = new CapabilityError("POLICY_DENIED", "no");
  const code: string = e.code;
  void code;
  // @ts-expect-error unknown error code
  new CapabilityError("NOPE", "x");
}
