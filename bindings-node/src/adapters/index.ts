/** Adapters from a capability registry to agent protocols (AI SDK, MCP, OpenAI Agents SDK). */
export { toAiSdkTools, aiSdkToolApproval, settleAiSdkApprovalResponses, type AiSdkToolsOptions } from "./ai-sdk.js";
export { AiSdkApprovalRequiredError, AiSdkPrincipalRequiredError, AiSdkToolError } from "./ai-sdk-answers.js";
export type { ApprovalIdStore } from "./approval-ids.js";
export { registerMcpTools, type McpRequestExtra, type RegisterMcpToolsOptions } from "./mcp.js";
export { MCP_APPROVAL_ID_META, MCP_APPROVAL_META, MCP_ERROR_META } from "./mcp-call.js";
export type { AdapterFrame, AdapterRegistry } from "./registry-port.js";
export { governedAgentTools, type OpenAiAgentsToolsOptions } from "./openai-agents.js";
export { GovernedAgentTools } from "./openai-agents-tools.js";
export { OpenAiAgentsPrincipalRequiredError } from "./openai-agents-answers.js";
