// How the CLI ends: an exit code per kind of outcome (documented in the README), and one error type that
// carries its message and code to the top, where it is printed once.

export const EXIT = {
  ok: 0,
  /** The server answered an error, or could not be reached. */
  failure: 1,
  /** The command line was wrong. */
  usage: 2,
  /** A run that was waited for ended other than `succeeded`. */
  runNotSucceeded: 3,
  /** Not signed in to the server, or the login ended: a failure like any other, with its own message. */
  notLoggedIn: 1,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
