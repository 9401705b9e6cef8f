/** Adapters from a capability registry to agent protocols (AI SDK, MCP, OpenAI Agents SDK). */
export {
  toAiSdkTools,
  aiSdkToolApproval,
  settleAiSdkApprovalResponses,
  AiSdkApprovalRequiredError,
  AiSdkPrincipalRequiredError,
  type AiSdkToolsOptions,
  type ApprovalIdStore,
} from "./ai-sdk.js";
export {
  registerMcpTools,
  MCP_APPROVAL_ID_META,
  MCP_APPROVAL_META,
  MCP_ERROR_META,
  type McpRequestExtra,
  type RegisterMcpToolsOptions,
} from "./mcp.js";
export type { AdapterFrame, AdapterRegistry } from "./registry-port.js";
export {
  governedAgentTools,
  GovernedAgentTools,
  OpenAiAgentsPrincipalRequiredError,
  type OpenAiAgentsToolsOptions,
} from "./openai-agents.js";
