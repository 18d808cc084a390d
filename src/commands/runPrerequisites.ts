/**
 * What `run` needs beyond a configuration that decodes, checked by `config check` without
 * changing anything: the mirror root exists and is a writable folder (dlsync never creates
 * it: a missing root may be an unmounted disk), the state directory is writable or can be
 * created, and there is a credential (an API key, or a `dlsync login` for this service).
 */
import * as NodePath from "node:path"
import { Effect, FileSystem, Option } from "effect"
import { makeTokenStore } from "../auth/TokenStore.ts"
import type { ConfigProblem } from "../config/ConfigError.ts"
import type { AppConfig } from "../config/loadConfig.ts"

export interface Prerequisites {
  readonly problems: ReadonlyArray<ConfigProblem>
  /** How `run` would sign in, when it can. */
  readonly credential: Option.Option<"API key" | "OAuth sign-in">
}

export const checkRunPrerequisites = Effect.fn("checkRunPrerequisites")(function* (config: AppConfig) {
  const fs = yield* FileSystem.FileSystem
  const source = config.file ?? "environment"
  const problems: Array<ConfigProblem> = []
  const problem = (key: string, message: string) => problems.push({ key, message, source })
  const isDirectory = (path: string) =>
    fs.stat(path).pipe(
      Effect.map((info) => Option.some(info.type === "Directory")),
      Effect.orElseSucceed(() => Option.none<boolean>())
    )
  const writable = (path: string) =>
    fs.access(path, { writable: true }).pipe(
      Effect.as(true),
      Effect.orElseSucceed(() => false)
    )

  const { root, state_dir } = config.mirror
  const rootKind = yield* isDirectory(root)
  if (Option.isNone(rootKind)) {
    problem(
      "mirror.root",
      `${root} does not exist; create it (dlsync does not: a missing root may be a disk that is not mounted)`
    )
  } else if (!rootKind.value) {
    problem("mirror.root", `${root} is not a folder`)
  } else if (!(yield* writable(root))) {
    problem("mirror.root", `${root} is not writable by this user; give it to the user dlsync runs as`)
  }

  // The state directory, or the nearest folder above it that exists, must be writable.
  let existing = state_dir
  while (Option.isNone(yield* isDirectory(existing)) && NodePath.dirname(existing) !== existing) {
    existing = NodePath.dirname(existing)
  }
  if (!(yield* writable(existing))) {
    problem(
      "mirror.state_dir",
      existing === state_dir
        ? `${state_dir} is not writable by this user`
        : `${state_dir} cannot be created: ${existing} is not writable by this user`
    )
  }

  const stored = yield* makeTokenStore(state_dir).read.pipe(Effect.option, Effect.map(Option.flatten))
  const signedIn = Option.exists(stored, (tokens) => tokens.authUrl === config.service.auth_url)
  const credential = signedIn
    ? Option.some("OAuth sign-in" as const)
    : Option.isSome(config.service.api_key)
      ? Option.some("API key" as const)
      : Option.none()
  if (Option.isNone(credential)) {
    problem(
      "service",
      "no credential: run `dlsync login` (needs service.client_id), or set service.api_key, service.api_key_file or DLSYNC_SERVICE_API_KEY"
    )
  }
  return { problems, credential } satisfies Prerequisites
})
