/**
 * The registry port over a gateway: the part of `CapabilityRegistry` the
 * AI SDK adapter uses (`invoke`, `resume`, `approvals`, `descriptors`), as
 * calls of an agent gateway client, with a bound presentation's fixed
 * arguments merged in. Apart from `remote-ai-sdk.ts`, which builds the
 * remote tool sets and bound presentations over it.
 */
import { CapabilityError } from "../errors.js";
import { GATEWAY } from "../generated/protocol.js";
import { takeHold } from "../handler-hold.js";
import type { ApprovalRequest, CapabilityDescriptor, Frame, InvokeResult } from "../types.js";
import type { AgentGatewayClient } from "../gateway/client.js";
import { capabilityErrorOf, type GatewayInvokeOutput } from "../gateway/wire.js";
import type { RemoteFrame } from "./remote-ai-sdk.js";
import type { AdapterRegistry } from "./registry-port.js";

interface Binding {
  name: string;
  id: string;
  fixed: Record<string, unknown>;
}

/** How long past a held call's deadline its client waits before it asks the gateway what became of it. */
const HELD_GRACE_MS = 1_000;

/** The part of `CapabilityRegistry` the AI SDK adapter uses, as gateway calls. */
export function remoteRegistry(
  client: AgentGatewayClient,
  descriptors: CapabilityDescriptor[],
  bind: Binding | undefined,
): AdapterRegistry {
  const port = {
    descriptors: () => descriptors,
    async invoke(name: string, input: unknown, frame: RemoteFrame): Promise<InvokeResult> {
      const call =
        bind !== undefined && name === bind.name
          ? { capability: bind.id, input: merge(input, bind.fixed) }
          : { capability: name, input };
      // The adapter's gate (`needsApproval`): the gateway holds the call
      // before its handler until `execute` says run (`handler-hold.ts`).
      const hold = takeHold(frame as Frame);
      if (hold === undefined) return asResult(await remote(() => client.invoke(call, callOptions(frame))));
      const gated = await remote(() => client.invokeHeld(call, callOptions(frame)));
      if (gated.status !== "held") return asResult(gated);
      // Unreleased by then, the gateway has ended the call (its deadline):
      // the wait ends a moment later, and asks what became of it.
      // (A gateway that says nothing of it: wait as long as a timer can.)
      const remaining = Number.isFinite(gated.remainingMs) ? gated.remainingMs : 2 ** 31 - 1;
      const run = await hold.heldElsewhere(frame.signal, remaining + HELD_GRACE_MS);
      // A word not to run goes even when the caller's signal aborted (it is the abort's word).
      const options = callOptions(run ? frame : { ...frame, signal: undefined });
      return asResult(await remote(() => client.release({ holdId: gated.holdId, run }, options)));
    },
    async resume(requestId: string, options: RemoteFrame & { throughTool?: string }): Promise<InvokeResult> {
      // The adapter resumes through the tool it presents: only a request
      // for that capability runs (the gateway's core checks it).
      const tool = options.throughTool;
      const throughTool = bind !== undefined && tool === bind.name ? bind.id : tool;
      const body = throughTool === undefined ? { id: requestId } : { id: requestId, throughTool };
      return asResult(await remote(() => client.approvals.resume(body, callOptions(options))));
    },
    approvals: {
      approve: (id: string, o: { reason?: string } = {}) => decide(client, id, true, o.reason),
      reject: (id: string, o: { reason?: string } = {}) => decide(client, id, false, o.reason),
    },
  };
  return port as unknown as AdapterRegistry;
}

async function decide(
  client: AgentGatewayClient,
  id: string,
  approve: boolean,
  reason?: string,
): Promise<ApprovalRequest> {
  try {
    return (await client.approvals.decide({
      id,
      approve,
      ...(reason === undefined ? {} : { reason }),
    })) as ApprovalRequest;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "FORBIDDEN") {
      // This user may not decide: the adapter resumes anyway and the core
      // reports the request's state (APPROVAL_PENDING until someone who may decides).
      // (The core's oRPC table reads FORBIDDEN as POLICY_DENIED.)
      throw new CapabilityError("POLICY_DENIED", GATEWAY.mayNotDecideMessage, { cause: error });
    }
    throw capabilityErrorOf(error) ?? error;
  }
}

function asResult(out: GatewayInvokeOutput): InvokeResult {
  return out.status === "ok" ? out : { status: "approval_required", request: out.request as ApprovalRequest };
}

/** A remote call: capability errors come back as `CapabilityError`. */
export async function remote<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (error) {
    throw capabilityErrorOf(error) ?? error;
  }
}

export function callOptions(frame: RemoteFrame) {
  return {
    ...(frame.signal === undefined ? {} : { signal: frame.signal }),
    context: frame.trace === undefined ? {} : { trace: frame.trace },
  };
}

/** The model's arguments with the fixed ones on top (fixed win). */
export function merge(input: unknown, fixed: Record<string, unknown>): unknown {
  if (input === undefined || input === null) return { ...fixed };
  if (typeof input !== "object" || Array.isArray(input)) return input; // the gateway rejects it
  return { ...(input as Record<string, unknown>), ...fixed };
}
