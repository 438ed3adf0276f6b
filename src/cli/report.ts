/**
 * How the CLI answers: its exit codes, the words for each kind of error, and the table that
 * listing commands print. Every cell and message that may come from the service or from
 * visibility goes through `printable`.
 */
import {
  AnswerRejectedError,
  BookEntryNotFoundError,
  BookRefreshNotFoundError,
  BookRefreshRefusedError,
  BookReportNotReadyError,
  ConnectionClientError,
  InvalidBookRequestError,
  InvalidBusinessKeyError,
  InvalidConnectionInputError,
  InvalidLoginRefError,
  InvalidScheduleError,
} from '../client/errors.js';
import { KeyDestroyedError, KeyVersionRevokedError, PayloadDecryptionError, PayloadNotSealedError } from '../codec/payload-errors.js';
import { printable } from './terminal-view.js';
import { UsageError } from './args.js';
import type { CliIo } from './command.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Prints what went wrong in `command` (as typed: "start", "refresh schedule"); returns the exit code. */
export function reportError(error: unknown, command: string, io: CliIo, program: string): number {
  if (error instanceof UsageError) {
    io.err(`${program} ${command}: ${error.message}`);
    io.err(`run "${program} ${command} --help" for usage`);
    return EXIT_USAGE;
  }
  // Refused by the client's own checks before anything was sent: the command line is at fault.
  if (
    error instanceof InvalidConnectionInputError ||
    error instanceof InvalidBusinessKeyError ||
    error instanceof InvalidScheduleError ||
    error instanceof InvalidLoginRefError ||
    error instanceof InvalidBookRequestError
  ) {
    io.err(`${program} ${command}: ${error.message}`);
    return EXIT_USAGE;
  }
  const book = bookProblem(error, program);
  if (book !== undefined) {
    io.err(`${program} ${command}: ${book}`);
    return EXIT_FAILED;
  }
  if (error instanceof AnswerRejectedError) {
    io.err(`answer refused (${error.source === 'client' ? 'checked before sending' : "by the workflow's validator"}): ${printable(error.problem)}`);
    io.err('nothing was sent to the service; run "show" to see the challenges again');
    return EXIT_FAILED;
  }
  const undecodable = payloadErrorIn(error);
  if (undecodable instanceof KeyVersionRevokedError) {
    io.err(
      `${program} ${command}: key version revoked: version ${undecodable.version} of key "${printable(undecodable.keyName)}" (${printable(undecodable.keyId)}) no longer decrypts, so this history cannot be read here`,
    );
    io.err('it was made unreadable on purpose (the key\'s min_decryption_version); docs/operations.md, "Revocation", says what an operator can do');
    return EXIT_FAILED;
  }
  if (undecodable instanceof KeyDestroyedError) {
    const whose = undecodable.tenant === undefined ? '' : ` of tenant "${printable(undecodable.tenant)}"`;
    const gone =
      undecodable.keptIn === 'key-file'
        ? `the key file ${printable(undecodable.keyName)}${whose} is gone`
        : `key "${printable(undecodable.keyName)}"${whose} is gone from the KMS`;
    io.err(`${program} ${command}: key destroyed: ${gone}, so this history cannot be read again`);
    io.err('it was destroyed on purpose when the lender was forgotten; docs/operations.md, "Forgetting a lender", says what that reaches');
    return EXIT_FAILED;
  }
  if (undecodable instanceof PayloadNotSealedError) {
    io.err(`${program} ${command}: refused: ${printable(undecodable.message)}`);
    io.err('a payload of this history was written without the codec, so it is not trusted; docs/threat-model.md, "Unsealed payloads", says why');
    return EXIT_FAILED;
  }
  if (undecodable !== undefined) {
    io.err(`${program} ${command}: cannot decrypt: ${printable(undecodable.message)}`);
    return EXIT_FAILED;
  }
  if (error instanceof ConnectionClientError) {
    io.err(`${program} ${command}: ${printable(error.message)}`);
    return EXIT_FAILED;
  }
  io.err(`${program} ${command}: ${error instanceof Error ? error.message : String(error)}`);
  return EXIT_FAILED;
}

/** The one line for a book refusal or a book thing not found, with what to run next; undefined for other errors. */
function bookProblem(error: unknown, program: string): string | undefined {
  if (error instanceof BookEntryNotFoundError) return `${printable(error.message)} ("${program} book list" lists it)`;
  if (error instanceof BookRefreshNotFoundError) return `${printable(error.message)} ("${program} book refreshes" lists them)`;
  if (error instanceof BookRefreshRefusedError) return `the refresh refused to ${error.request}: ${printable(error.reason)}`;
  if (error instanceof BookReportNotReadyError)
    return `${error.refreshWorkflowId} has not ended, so it has no report yet; "${program} book progress ${error.refreshWorkflowId}" says how far it is`;
  return undefined;
}

/** Left-aligned columns as wide as their widest cell; cells are made printable. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const cells = rows.map((row) => row.map(printable));
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((row) => (row[i] ?? '').length)));
  const format = (row: readonly string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [format(header), ...cells.map(format)];
}

/** A payload error, thrown as it is or as the cause of what the SDK threw around it. */
function payloadErrorIn(error: unknown): PayloadDecryptionError | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    if (current instanceof PayloadDecryptionError) return current;
  }
  return undefined;
}
