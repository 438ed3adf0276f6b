/**
 * What a command gets to work with, built from the client config: the CLI's one reader of it. The
 * config is read when a command first asks (usage errors need none), the client opened once.
 */
import { loadClientConfig } from '../settings/client.js';
import type { ConnectionsClient } from '../client/connections.js';
import type { CliIo, CommandContext } from './command.js';

export interface OpenContext {
  readonly context: CommandContext;
  /** Closes the client if the command opened it. */
  readonly close: () => Promise<void>;
}

export function openContext(io: CliIo, program: string): OpenContext {
  let client: ConnectionsClient | undefined;
  return {
    context: {
      io,
      program,
      get defaultCustomerId() {
        return loadClientConfig(io.env).customerId;
      },
      client: async () => (client ??= await io.connect(loadClientConfig(io.env))),
      config: () => loadClientConfig(io.env),
    },
    close: async () => {
      await client?.close();
    },
  };
}
