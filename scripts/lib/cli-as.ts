/**
 * The operator CLI run in this process as one person: when a command prints a sign-in address
 * (`login`), a browser (HttpBrowser) signs in there with the person's username and password, as the
 * person would. Each run's exit code and standard error come back, and the Temporal connections the
 * CLI asked for are counted (a command refused before Temporal asks for none). For the tests and the
 * security check, which drive the CLI against a real provider.
 */
import { runCli } from '../../src/cli/run-cli.js';
import type { CliIo } from '../../src/cli/command.js';
import { HttpBrowser } from './http-browser.js';

export interface CliRun {
  readonly code: number;
  readonly err: string;
}

export interface CliAs {
  run(args: readonly string[]): Promise<CliRun>;
  /** How many times a command asked for its Temporal connection, over every run. */
  connects(): number;
}

export interface CliAsOptions {
  /** The CLI's environment (CLI_OIDC_ISSUER, CLI_CREDENTIALS_FILE, AUDIT_STORE, ...). */
  readonly env: NodeJS.ProcessEnv;
  readonly username: string;
  readonly password: string;
  /** How a command gets its Temporal connection (counted before it is called). */
  readonly connect: CliIo['connect'];
  /** Between polls of `watch`; default: no wait. */
  readonly sleep?: (ms: number) => Promise<void>;
}

export function cliAs({ env, username, password, connect, sleep = () => Promise.resolve() }: CliAsOptions): CliAs {
  let connects = 0;
  return {
    async run(args) {
      const err: string[] = [];
      let browsing: Promise<unknown> = Promise.resolve();
      const code = await runCli(args, {
        out: (text) => {
          const address = /^\s+(http\S+)$/m.exec(text)?.[1];
          if (!address) return;
          const browser = new HttpBrowser();
          browsing = browser.open(address).then((form) => browser.submit(form, { username, password }));
        },
        err: (line) => err.push(line),
        readStdin: () => Promise.resolve(''),
        env,
        connect: (config) => {
          connects += 1;
          return connect(config);
        },
        now: Date.now,
        sleep,
      });
      await browsing;
      return { code, err: err.join('\n') };
    },
    connects: () => connects,
  };
}
