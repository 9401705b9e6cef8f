/** The agent gateway (server and client) and progress helpers (issue 9). */
export { createAgentGateway, type AgentGatewayOptions, type AgentGatewayRouter } from "./server.js";
export { traceOf, traceHeaders, type HeadersLike } from "./trace-headers.js";
export {
  createGatewayClient,
  type AgentGatewayClient,
  type GatewayClientContext,
  type GatewayClientOptions,
} from "./client.js";
export {
  capabilityErrorOf,
  type GatewayApprovalView,
  type GatewayDescriptorsOutput,
  type GatewayInvokeOutput,
  type GatewayErrorData,
  type GatewayStreamEvent,
} from "./wire.js";
export {
  createRemoteAiSdkTools,
  presentBound,
  type RemoteAiSdkToolsOptions,
  type BoundPresentation,
  type BoundPresentationOptions,
} from "../adapters/remote-ai-sdk.js";
export { progressMetadataCbor, type ProgressEvent, type ProgressListener, type ReportProgress } from "../progress.js";
