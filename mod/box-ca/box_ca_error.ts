/** The box CA cannot be used as it is, or was asked for something it never signs. */
export class BoxCaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BoxCaError";
  }
}
