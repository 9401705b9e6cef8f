// tests/vectors/agents/openai.json: the same capabilities and scripted model
// turns give the same tool outputs through this adapter as through Python's
// (tests/test_openai_agents_vectors.py), driven by the SDK's own offline
// model (`ScriptedModel`) and Runner. Approval ids are numbered in order of
// appearance; everything else is compared exactly.
import assert from "node:assert/strict";
import { appendFileSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { Agent, Runner } from "@openai/agents-core";
import { ScriptedModel, assistantMessage, functionCall } from "@openai/agents-core/testing";

import { createCapabilityRegistry, governedAgentTools } from "@orpc-agent/core";

import { VECTORS, vectorOptions, vectorRouter } from "../helpers.js";

const doc = JSON.parse(readFileSync(`${VECTORS}/agents/openai.json`, "utf8"));
const APPROVAL_ID = /apr_[0-9a-f]{32}/g;
const runner = new Runner({ tracingDisabled: true });

/** A scripted turn's items as the SDK's own helpers make them. */
const turn = (items) =>
  items.map((i) =>
    i.message !== undefined ? assistantMessage(i.message) : functionCall(i.tool, i.arguments, { callId: i.callId }),
  );

/** What the model was sent of each tool call, by call id, at each model call that carried any. */
function sentOutputs(model, ids) {
  const sent = {};
  model.calls.forEach((call, index) => {
    const outputs = {};
    for (const item of call.request.input) {
      if (typeof item === "object" && item.type === "function_call_result") {
        const text = typeof item.output === "string" ? item.output : item.output.text;
        outputs[item.callId] = text.replace(APPROVAL_ID, (id) => {
          if (!ids.has(id)) ids.set(id, `<approval-${ids.size + 1}>`);
          return ids.get(id);
        });
      }
    }
    if (Object.keys(outputs).length > 0) sent[String(index)] = outputs;
  });
  return sent;
}

for (const c of doc.cases) {
  test(`openai-agents vectors: ${c.name}`, async () => {
    const calls = {};
    const registry = await createCapabilityRegistry(
      vectorRouter(c.capabilities, c.hostPolicies, calls),
      vectorOptions(c.options, c.hostPolicies),
    );
    const governed = governedAgentTools(registry, c.frame);
    const model = new ScriptedModel(c.model.map(turn));
    const agent = new Agent({ name: "vectors", model, tools: governed.tools });
    let last;
    try {
      for (const [i, step] of c.steps.entries()) {
        const where = `${c.name}: step ${i}`;
        if (step.approve !== undefined || step.reject !== undefined) {
          for (const item of last.interruptions) {
            if (step.approve !== undefined) await governed.approve(last.state, item, step.approve);
            else await governed.reject(last.state, item, step.reject);
          }
          continue;
        }
        last = await runner.run(agent, step.run ?? last.state);
        assert.deepEqual(
          last.interruptions.map((item) => item.name),
          step.expect.interruptions,
          where,
        );
        if (step.expect.finalOutput !== undefined) assert.equal(last.finalOutput, step.expect.finalOutput, where);
      }
      const sent = sentOutputs(model, new Map());
      // Authoring: AGENT_VECTORS_DUMP=<file> writes what this adapter sent, one JSON line per case.
      if (process.env.AGENT_VECTORS_DUMP !== undefined) {
        appendFileSync(process.env.AGENT_VECTORS_DUMP, `${JSON.stringify({ name: c.name, sent })}\n`);
      } else {
        assert.deepEqual(sent, c.sent, `${c.name}: what the model was sent`);
      }
      if (c.mustNotContain !== undefined) assert.ok(!JSON.stringify(sent).includes(c.mustNotContain), c.name);
      for (const [id, n] of Object.entries(c.handlerCalls ?? {})) assert.equal(calls[id] ?? 0, n, `${c.name}: ${id}`);
    } finally {
      registry.close();
    }
  });
}
