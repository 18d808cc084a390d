// Types for undici's modules loaded on their own (undiciAgent.ts): the package's own.
declare module "undici/lib/dispatcher/agent.js" {
  import type { Agent } from "undici"

  const AgentClass: typeof Agent
  export default AgentClass
}

declare module "undici/lib/api/api-request.js" {
  import type { Dispatcher } from "undici"

  /** Called with a dispatcher as `this`; without a callback it returns the answer's promise. */
  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>
  export default request
}
