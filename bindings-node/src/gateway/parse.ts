/**
 * Reads gateway request bodies. Only the named fields are read: anything
 * else a client sends (a forged `surface`, `actor`, `approver`) is ignored.
 * A malformed body is `BAD_REQUEST` with a message naming the field.
 */
import { ORPCError } from "@orpc/server";

import { LONE_SURROGATE } from "../json.js";

import type { GatewayDecideInput, GatewayDescriptorsInput, GatewayInvokeInput, GatewayListInput } from "./wire.js";

const STATUSES = new Set(["pending", "approved", "rejected", "consumed", "expired"]);

function bad(message: string): never {
  throw new ORPCError("BAD_REQUEST", { status: 400, message });
}

function objectOf(input: unknown, what: string): Record<string, unknown> {
  if (input === undefined || input === null) return {};
  if (typeof input !== "object" || Array.isArray(input)) bad(`${what} expects an object body.`);
  return input as Record<string, unknown>;
}

export function readDescriptorsInput(input: unknown): GatewayDescriptorsInput {
  const { format } = objectOf(input, "descriptors");
  if (format === undefined || format === "json") return { format: "json" };
  if (format === "cbor") return { format: "cbor" };
  return bad('descriptors: `format` is "json" or "cbor".');
}

export function readInvokeInput(input: unknown): GatewayInvokeInput {
  const body = objectOf(input, "invoke");
  if (typeof body.capability !== "string" || body.capability === "") {
    bad("invoke: `capability` (a capability id or tool name) is required.");
  }
  return { capability: body.capability, input: body.input };
}

export function readReleaseInput(input: unknown): { holdId: string; run: boolean } {
  const body = objectOf(input, "release");
  if (typeof body.holdId !== "string" || body.holdId === "") bad("release: `holdId` is required.");
  if (typeof body.run !== "boolean") bad("release: `run` is a boolean.");
  return { holdId: body.holdId as string, run: body.run as boolean };
}

export function readId(input: unknown): string {
  const { id } = objectOf(input, "approvals");
  if (typeof id !== "string" || id === "") bad("approvals: `id` is required.");
  return id;
}

/** `approvals.resume`'s body: the request id, and the tool (a capability id or tool name) it must be for. */
export function readResumeInput(input: unknown): { id: string; throughTool?: string } {
  const body = objectOf(input, "approvals.resume");
  const id = readId(body);
  if (body.throughTool !== undefined && typeof body.throughTool !== "string")
    bad("approvals.resume: `throughTool` is a string (a capability id or tool name).");
  return body.throughTool === undefined ? { id } : { id, throughTool: body.throughTool as string };
}

export function readDecideInput(input: unknown): GatewayDecideInput {
  const body = objectOf(input, "approvals.decide");
  const id = readId(body);
  if (typeof body.approve !== "boolean") bad("approvals.decide: `approve` (true or false) is required.");
  if (body.reason !== undefined && typeof body.reason !== "string") bad("approvals.decide: `reason` is a string.");
  // Text with no UTF-8 form (a lone surrogate): the store would keep another text.
  if (typeof body.reason === "string" && LONE_SURROGATE.test(body.reason)) {
    bad("approvals.decide: `reason` is not valid UTF-8 text (a lone surrogate).");
  }
  return { id, approve: body.approve, ...(body.reason === undefined ? {} : { reason: body.reason as string }) };
}

export function readListInput(input: unknown): GatewayListInput {
  const body = objectOf(input, "approvals.list");
  const out: GatewayListInput = {};
  if (body.status !== undefined) {
    if (typeof body.status !== "string" || !STATUSES.has(body.status)) bad("approvals.list: unknown `status`.");
    out.status = body.status as GatewayListInput["status"];
  }
  if (body.capabilityId !== undefined) {
    if (typeof body.capabilityId !== "string") bad("approvals.list: `capabilityId` is a string.");
    out.capabilityId = body.capabilityId;
  }
  if (body.limit !== undefined) {
    if (typeof body.limit !== "number" || !Number.isInteger(body.limit) || body.limit < 1) {
      bad("approvals.list: `limit` is a positive integer.");
    }
    out.limit = body.limit;
  }
  return out;
}
