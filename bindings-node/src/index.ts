/**
 * @orpc-agent/core — governed capabilities for AI agents over oRPC
 * procedures. The rules live in the Rust core; this package adapts.
 */
export { agentProcedure } from "./declare.js";
export { capabilityErrorsToORPC } from "./orpc-errors.js";
export {
  createCapabilityRegistry,
  type Logger,
  type RegistryOptions,
  type ApprovalStoreOption,
  type InspectReport,
} from "./create-registry.js";
export { CapabilityRegistry } from "./registry.js";
export {
  inputHash,
  type ResumeOptions,
  type Approvals,
  type ApprovalListFilter,
  type DecideOptions,
} from "./approvals.js";
export type { TelemetryOptions } from "./telemetry.js";
export {
  CapabilityError,
  RegistryValidationError,
  ERROR_CODES,
  type CapabilityErrorCode,
  type CapabilityErrorJson,
  type RegistryProblem,
} from "./errors.js";
export { allow, abstain, deny, requireApproval } from "./policies.js";
export {
  checkManifest,
  checkStdMeta,
  decideCapabilityGrant,
  decodeStdMeta,
  embedComponent,
  encodeStdMeta,
  inspectComponent,
  toolDefinitionMeta,
  unwrapStdForward,
  wrapStdForward,
  type CapabilityDenial,
  type CapabilityGrantDecision,
  type StdMeta,
  type StdMetaPosition,
  type StdMetaProblem,
} from "./act.js";
export {
  PostgresAuditSink,
  type ApprovalPage,
  type AuditSinkStats,
  type PostgresConnection,
  type PostgresConnectionOptions,
} from "./stores.js";
export type { StandardSchema } from "./schema.js";
export type * from "./types.js";
export * from "./adapters/index.js";
export * from "./gateway/index.js";
