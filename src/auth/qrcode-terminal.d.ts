// Types for qrcode-terminal 0.12 (the package ships none): only what qrCode.ts uses.
declare module "qrcode-terminal" {
  interface GenerateOptions {
    readonly small?: boolean
  }
  const qrcode: {
    /** Calls `callback` synchronously with the rendered code. */
    generate(input: string, options: GenerateOptions, callback: (output: string) => void): void
  }
  export default qrcode
}
