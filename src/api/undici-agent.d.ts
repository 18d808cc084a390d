// Types for undici's Agent module loaded on its own (undiciAgent.ts): the package's own.
declare module "undici/lib/dispatcher/agent.js" {
  import type { Agent } from "undici"

  const AgentClass: typeof Agent
  export default AgentClass
}
