// In-band confirmation (issue 18): registerMcpTools' confirmInClient puts an
// approval of a mapped type to the person at the client through MCP
// elicitation — the SDK's real Client answering elicitation/create.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry, registerMcpTools } from "@orpc-agent/core";

import { ordersFixture, waitFor } from "./orders-fixture.mjs";

const REFUND = { name: "orders_refund", arguments: { id: "o-7", amount: 20 } };

/** A client that answers every elicitation with `answer` (or none: no elicitation capability). */
async function connected({ answer, registryOptions, approvalTypes = ["human-confirmation"] } = {}) {
  const fixture = await ordersFixture(registryOptions);
  const server = new McpServer({ name: "orders", version: "1.0.0" });
  registerMcpTools(server, fixture.registry, {
    frame: () => ({ actor: { id: "ana" } }),
    confirmInClient: { approvalTypes },
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const asked = [];
  const client = new Client(
    { name: "desktop", version: "1.0.0" },
    { capabilities: answer === undefined ? {} : { elicitation: {} } },
  );
  if (answer !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      if (answer === "hang") return new Promise(() => {});
      if (typeof answer === "function") return answer(request.params);
      return { action: answer, ...(answer === "accept" ? { content: {} } : {}) };
    });
  }
  await client.connect(clientSide);
  return { ...fixture, client, asked };
}

describe("confirmInClient: approvals answered in the client through elicitation", () => {
  it("accept records the caller as approver and runs the call once", async () => {
    const { client, registry, calls, asked } = await connected({ answer: "accept" });
    try {
      const result = await client.callTool(REFUND);
      assert.equal(result.isError, false, JSON.stringify(result));
      assert.deepEqual(result.structuredContent, { refunded: 20, id: "o-7" });
      assert.equal(calls.filter((c) => c.tool === "refund").length, 1);
      assert.equal(asked.length, 1);
      assert.match(asked[0].message, /^Allow "orders_refund" to run with \{"id":"o-7","amount":20\}\?/);
      assert.deepEqual(asked[0].requestedSchema, { type: "object", properties: {} });
      const [request] = await registry.approvals.list({});
      assert.equal(request.status, "consumed");
      assert.equal(request.decidedBy, "ana");
      // The same call again is a new request, put to the client again: nothing runs twice unasked.
      const again = await client.callTool(REFUND);
      assert.equal(again.isError, false);
      assert.equal(asked.length, 2);
      assert.equal(calls.filter((c) => c.tool === "refund").length, 2);
    } finally {
      await client.close();
    }
  });

  it("a request that expires past setTimeout's range (30 days) is still asked and waited for: the accept runs it once", async () => {
    const answer = async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { action: "accept", content: {} };
    };
    const { client, registry, calls } = await connected({
      answer,
      registryOptions: { defaults: { approvalExpiresInMs: 30 * 24 * 3600 * 1000 } },
    });
    try {
      const result = await client.callTool(REFUND);
      assert.equal(result.isError, false, JSON.stringify(result));
      assert.equal(calls.filter((c) => c.tool === "refund").length, 1);
      assert.equal((await registry.approvals.list({}))[0].status, "consumed");
    } finally {
      await client.close();
    }
  });

  for (const action of ["decline", "cancel"]) {
    it(`${action} rejects the request; nothing runs`, async () => {
      const { client, registry, calls } = await connected({ answer: action });
      try {
        const result = await client.callTool(REFUND);
        assert.equal(result.isError, true);
        assert.equal(result._meta["orpc-agent/error"].code, "APPROVAL_REJECTED");
        assert.equal(calls.filter((c) => c.tool === "refund").length, 0);
        const [request] = await registry.approvals.list({});
        assert.equal(request.status, "rejected");
        assert.equal(request.decisionReason, "Declined in the MCP client (elicitation).");
      } finally {
        await client.close();
      }
    });
  }

  it("a client without elicitation gets the ordinary approval-required result", async () => {
    const { client, registry, calls } = await connected({});
    try {
      const result = await client.callTool(REFUND);
      assert.equal(result._meta["orpc-agent/approval"].status, "approval_required");
      assert.equal(calls.length, 0);
      assert.equal((await registry.approvals.list({}))[0].status, "pending");
    } finally {
      await client.close();
    }
  });

  it("a type the app did not map to the end user is not asked", async () => {
    const { client, asked, calls } = await connected({ answer: "accept", approvalTypes: ["manager"] });
    try {
      const result = await client.callTool(REFUND);
      assert.equal(result._meta["orpc-agent/approval"].status, "approval_required");
      assert.equal(asked.length, 0);
      assert.equal(calls.length, 0);
    } finally {
      await client.close();
    }
  });

  it("under approverMustDiffer the requester's own accept decides nothing", async () => {
    const { client, registry, calls, asked } = await connected({
      answer: "accept",
      registryOptions: { approverMustDiffer: true },
    });
    try {
      const result = await client.callTool(REFUND);
      assert.equal(asked.length, 1);
      assert.equal(result._meta["orpc-agent/approval"].status, "approval_required");
      assert.equal(calls.length, 0);
      assert.equal((await registry.approvals.list({}))[0].status, "pending");
    } finally {
      await client.close();
    }
  });

  it("two identical calls asked at once: the first accept runs it, the second reads what became of it", async () => {
    // Both calls find the one pending request (same caller, same input) and
    // both are asked. The second accept's decision is refused (the request
    // is decided); the model must read that it ran, not "approval required,
    // call again", which would open a second request to approve.
    const answers = [];
    const answer = () => new Promise((resolve) => answers.push(resolve));
    const accept = { action: "accept", content: {} };
    const { client, registry, calls, asked } = await connected({ answer });
    try {
      const first = client.callTool(REFUND);
      const second = client.callTool(REFUND);
      await waitFor(() => answers.length === 2, "both confirmations");
      assert.equal(new Set(asked.map((a) => a.message)).size, 1, "one request asked about twice");
      answers[0](accept);
      const ran = await first;
      assert.equal(ran.isError, false, JSON.stringify(ran));
      answers[1](accept);
      const twin = await second;
      assert.equal(twin.isError, true);
      assert.equal(twin._meta["orpc-agent/error"].code, "APPROVAL_CONSUMED");
      assert.equal(twin._meta["orpc-agent/approval"], undefined);
      assert.equal(calls.filter((c) => c.tool === "refund").length, 1);
      assert.deepEqual(
        (await registry.approvals.list({})).map((r) => r.status),
        ["consumed"],
      );
    } finally {
      await client.close();
    }
  });

  /**
   * One call whose person is asked while an approval UI decides the request
   * (`decideElsewhere`), then answers `answer`: the call's result, the
   * request and the refunds that ran.
   */
  async function decidedWhileAsked(decideElsewhere, answer) {
    let decide;
    const { client, registry, calls } = await connected({
      answer: () => new Promise((resolve) => (decide = resolve)),
    });
    try {
      const pending = client.callTool(REFUND);
      await waitFor(() => decide !== undefined, "the confirmation");
      const [request] = await registry.approvals.list({});
      await decideElsewhere(registry, request.id);
      decide(answer);
      const result = await pending;
      return {
        result,
        request: await registry.approvals.get(request.id),
        refunds: calls.filter((c) => c.tool === "refund"),
      };
    } finally {
      await client.close();
    }
  }

  it("a request rejected in an approval UI while the person was asked: their accept reads the rejection", async () => {
    const { result, refunds } = await decidedWhileAsked(
      (registry, id) => registry.approvals.reject(id, { approver: "lead" }),
      { action: "accept", content: {} },
    );
    assert.equal(result._meta["orpc-agent/error"].code, "APPROVAL_REJECTED");
    assert.equal(refunds.length, 0);
  });

  it("a request approved elsewhere while the person was asked: their decline never runs it", async () => {
    const { result, request, refunds } = await decidedWhileAsked(
      (registry, id) => registry.approvals.approve(id, { approver: "lead" }),
      { action: "decline" },
    );
    assert.equal(result._meta["orpc-agent/approval"].status, "approval_required");
    assert.equal(refunds.length, 0);
    assert.equal(request.status, "approved", "left for its requester to run");
  });

  it("an approval view with no JSON form asks nobody: the request waits, not the caller's arguments to fix", async () => {
    const logged = [];
    let ran = 0;
    const registry = await createCapabilityRegistry(
      {
        orders: {
          refund: agentProcedure(os.$context())
            .meta({
              agent: {
                description: "Refund an order.",
                expose: { mcp: true },
                sideEffect: "write",
                risk: "high",
                approval: { required: true, type: "human-confirmation" },
                redact: { approvalInput: () => ({ seen: new Set(["o-7"]) }) },
              },
            })
            .input(z.object({ id: z.string(), amount: z.number() }))
            .handler(async () => ++ran),
        },
      },
      { logger: { warn: (message) => logged.push(message) } },
    );
    const server = new McpServer({ name: "orders", version: "1.0.0" });
    registerMcpTools(server, registry, {
      frame: () => ({ actor: { id: "ana" } }),
      confirmInClient: { approvalTypes: ["human-confirmation"] },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const asked = [];
    const client = new Client({ name: "desktop", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept", content: {} };
    });
    await client.connect(clientSide);
    try {
      const result = await client.callTool(REFUND);
      assert.equal(result._meta["orpc-agent/approval"]?.status, "approval_required", JSON.stringify(result));
      assert.deepEqual([ran, asked.length], [0, 0]);
      assert.equal((await registry.approvals.list({}))[0].status, "pending");
      assert.equal(logged.length, 1);
    } finally {
      await client.close();
    }
  });
});
