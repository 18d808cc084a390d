/**
 * Password hashes: a hash made here checks its password and no other, reads back from its
 * text form, and a text that is not one says what is expected.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { checkPassword, hashPassword, parsePasswordHash } from "../../src/server/passwordHash.ts"

describe("passwordHash", () => {
  it.effect("a new hash checks its password and refuses others", () =>
    Effect.gen(function* () {
      const text = yield* hashPassword(Redacted.make("correct horse"))
      assert.match(text, /^\$scrypt\$ln=14,r=8,p=1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
      const hash = parsePasswordHash(text)
      if (typeof hash === "string") return assert.fail(hash)
      assert.isTrue(yield* checkPassword(hash, "correct horse"))
      assert.isFalse(yield* checkPassword(hash, "correct horse "))
      assert.isFalse(yield* checkPassword(hash, ""))
      // Salted: the same password hashes differently each time.
      assert.notStrictEqual(yield* hashPassword(Redacted.make("correct horse")), text)
    })
  )

  it("a text that is no hash says what is expected", () => {
    assert.include(String(parsePasswordHash("hunter2")), "$scrypt$ln=")
    assert.include(String(parsePasswordHash("$scrypt$ln=40,r=8,p=1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==")), "range")
    assert.include(String(parsePasswordHash("$scrypt$ln=14,r=8,p=1$YQ==$YQ==")), "too short")
  })
})
