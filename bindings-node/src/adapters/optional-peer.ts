/**
 * `ai`, `@modelcontextprotocol/sdk` and the `zod` MCP needs are optional peer
 * dependencies: an app that uses only one adapter (or none) must be able to
 * import `@orpc-agent/core` without the others installed. So the adapters load
 * them on first use, synchronously (their entry points are synchronous), and
 * name the missing package when it is absent. Both `ai` and zod mark their
 * schema objects with global symbols or registries, so instances loaded here
 * and the app's own work together.
 */

import { createRequire } from "node:module";

const requireFromHere = createRequire(import.meta.url);
const loaded = new Map<string, unknown>();

export function optionalPeer<T>(name: string, usedBy: string): T {
  let module = loaded.get(name);
  if (module === undefined) {
    try {
      module = requireFromHere(name);
    } catch (error) {
      if ((error as { code?: string }).code === "MODULE_NOT_FOUND") {
        throw new Error(`${usedBy} needs the "${name}" package: npm install ${name}`, { cause: error });
      }
      throw error;
    }
    loaded.set(name, module);
  }
  return module as T;
}
