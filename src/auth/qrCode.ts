/** A QR code of a URL drawn with half-block characters, for `dlsync login` on a terminal. */
import qrcode from "qrcode-terminal"

export const renderQrCode = (text: string): string => {
  let output = ""
  qrcode.generate(text, { small: true }, (rendered) => {
    output = rendered
  })
  return output
}
