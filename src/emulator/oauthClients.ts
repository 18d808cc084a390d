/**
 * The OAuth clients the emulator registers: a public Device Flow client (dlsync's), a
 * confidential web app, a public web app without Device Flow, and a disabled one. Their ids
 * are fixed so that scripts and tests can name them.
 */

export const DEVICE_CLIENT_ID = "6f1c2a0e-3b1d-4c55-9a57-0d1e2f3a4b5c"
export const CONFIDENTIAL_CLIENT_ID = "9b2e4d6f-8a0c-4e1f-b3d5-7c9e1a2b3c4d"
export const CONFIDENTIAL_CLIENT_SECRET = "emulator-confidential-secret"
export const WEB_CLIENT_ID = "2d4f6a8c-0e1a-4b3c-8d5e-6f7a8b9c0d1e"
export const DISABLED_CLIENT_ID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
/** Redirect URI registered for the web and confidential clients. */
export const REDIRECT_URI = "http://127.0.0.1/callback"

export interface OAuthClient {
  readonly id: string
  readonly name: string
  /** Public clients have no secret; confidential clients must send it. */
  readonly secret: string | undefined
  readonly deviceFlow: boolean
  readonly redirectUris: ReadonlyArray<string>
  readonly disabled: boolean
}

/** The registered clients, the Device Flow one under `deviceClientId`. */
export const defaultClients = (deviceClientId: string): ReadonlyArray<OAuthClient> => [
  {
    id: deviceClientId,
    name: "dlsync (device)",
    secret: undefined,
    deviceFlow: true,
    redirectUris: [REDIRECT_URI],
    disabled: false
  },
  {
    id: CONFIDENTIAL_CLIENT_ID,
    name: "Confidential web app",
    secret: CONFIDENTIAL_CLIENT_SECRET,
    deviceFlow: false,
    redirectUris: [REDIRECT_URI],
    disabled: false
  },
  {
    id: WEB_CLIENT_ID,
    name: "Public web app (no device flow)",
    secret: undefined,
    deviceFlow: false,
    redirectUris: [REDIRECT_URI],
    disabled: false
  },
  {
    id: DISABLED_CLIENT_ID,
    name: "Disabled app",
    secret: undefined,
    deviceFlow: true,
    redirectUris: [REDIRECT_URI],
    disabled: true
  }
]
