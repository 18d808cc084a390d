/**
 * Categories and tags. A category is this surface's folder `<mirror root>/<category>`
 * (configured, or created here or by an add); its savePath is that folder as the app sees
 * it and cannot be changed (editCategory is accepted for an existing one). A name that is
 * not a folder inside the mirror root ("..", an absolute path) is refused with 400, where
 * qBittorrent would take it. Tags: torrentTags.ts.
 *
 * Answers as qBittorrent 5.0 gives them: createCategory 400 "Category cannot be empty",
 * 409 when it exists; editCategory 409 when it does not; setCategory 409 "Incorrect category
 * name" when a named torrent would go to a category that does not exist.
 */
import { Effect } from "effect"
import { categoryProblem } from "../intake/categoryName.ts"
import { toAppPath } from "../paths/pathMap.ts"
import {
  badRequest,
  conflict,
  type Endpoint,
  intakeProblem,
  json,
  okEmpty,
  type Response,
  read,
  required,
  splitTags,
  write
} from "./answers.ts"
import { type EndpointContext, SURFACE } from "./endpointContext.ts"
import type { RequestForm } from "./requestForm.ts"

export const categoryTagEndpoints = (ctx: EndpointContext): Readonly<Record<string, Endpoint>> => {
  const { intake } = ctx

  const categoryParameter = (form: RequestForm): Effect.Effect<string, Response> =>
    Effect.gen(function* () {
      const category = (yield* required(form, "category")).trim()
      const problem = categoryProblem(category)
      return problem === undefined ? category : yield* Effect.fail(badRequest(problem))
    })

  const exists = (name: string) =>
    Effect.map(intake.categories(SURFACE), (categories) => categories.some((c) => c.name === name))

  return {
    "torrents/categories": read(() => Effect.map(categoriesObject(ctx), json)),
    "torrents/createCategory": write((form) =>
      Effect.gen(function* () {
        const category = yield* categoryParameter(form)
        if (category === "") return yield* Effect.fail(badRequest("Category cannot be empty"))
        if (yield* exists(category)) return yield* Effect.fail(conflict("Unable to create category"))
        yield* intake.createCategory(SURFACE, category).pipe(Effect.mapError(intakeProblem))
        return okEmpty
      })
    ),
    "torrents/editCategory": write((form) =>
      Effect.gen(function* () {
        const category = yield* categoryParameter(form)
        if (category === "") return yield* Effect.fail(badRequest("Category cannot be empty"))
        if (!(yield* exists(category))) return yield* Effect.fail(conflict("Unable to edit category"))
        return okEmpty
      })
    ),
    "torrents/removeCategories": write((form) =>
      Effect.gen(function* () {
        const names = (yield* required(form, "categories"))
          .split(/\r?\n/)
          .map((n) => n.trim())
          .filter((n) => n !== "")
        if (names.length > 0) yield* intake.removeCategories(SURFACE, names)
        return okEmpty
      })
    ),
    "torrents/setCategory": write((form) =>
      Effect.gen(function* () {
        const items = yield* ctx.selected(form)
        const category = yield* categoryParameter(form)
        if (items.length === 0) return okEmpty
        if (category !== "" && !(yield* exists(category))) {
          return yield* Effect.fail(conflict("Incorrect category name"))
        }
        yield* intake
          .setCategory(
            items.map((item) => item.id),
            category
          )
          .pipe(Effect.mapError(intakeProblem))
        return okEmpty
      })
    ),
    "torrents/tags": read(() => Effect.succeed(json(ctx.tags.all()))),
    "torrents/createTags": write((form) =>
      Effect.map(required(form, "tags"), (tags) => {
        ctx.tags.create(splitTags(tags))
        return okEmpty
      })
    ),
    "torrents/deleteTags": write((form) =>
      Effect.map(required(form, "tags"), (tags) => {
        ctx.tags.delete(splitTags(tags))
        return okEmpty
      })
    ),
    "torrents/addTags": write((form) =>
      Effect.gen(function* () {
        const tags = splitTags(yield* required(form, "tags"))
        for (const item of yield* ctx.selected(form)) ctx.tags.add(item.id, tags)
        return okEmpty
      })
    ),
    "torrents/removeTags": write((form) =>
      Effect.gen(function* () {
        const given = form.get("tags")
        const tags = given === undefined ? undefined : splitTags(given)
        for (const item of yield* ctx.selected(form)) ctx.tags.remove(item.id, tags)
        return okEmpty
      })
    )
  }
}

/** torrents/categories (and sync/maindata's categories): name → {name, savePath}. */
export const categoriesObject = (ctx: EndpointContext) =>
  Effect.map(ctx.intake.categories(SURFACE), (list) =>
    Object.fromEntries(
      list.map((c) => [c.name, { name: c.name, savePath: toAppPath(ctx.options.pathMap, c.savePath) }])
    )
  )
