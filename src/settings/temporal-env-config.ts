/**
 * Temporal's own environment configuration (a temporal.toml profile and Temporal's TEMPORAL_*
 * variables, read through @temporalio/envconfig): what the `temporal` section takes where our variables
 * are unset.
 */
import { readFileSync } from 'node:fs';
import { platform } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { loadClientConfig as loadTemporalConfigFile, loadClientConfigProfile, type ClientConfigProfile, type ConfigDataSource } from '@temporalio/envconfig';
import { z } from 'zod';
import { doc, group, HostName, HostPort } from './document.js';

/**
 * A team that reaches its cluster or Temporal Cloud with the `temporal` CLI already has a profile in
 * temporal.toml (TEMPORAL_CONFIG_FILE, else the user's config directory: ~/.config/temporalio/
 * temporal.toml on Linux; profile TEMPORAL_PROFILE, else "default") and perhaps Temporal's own
 * variables: the SDK's envconfig reads both, and the `temporal` section takes from them what our
 * variables leave unset. The five names both read (same meaning) are ours: validated by TemporalVars
 * and kept from envconfig, so what it gives comes from the file or from Temporal's other variables
 * (TEMPORAL_TLS_SERVER_CA_CERT_PATH/_DATA, TEMPORAL_TLS_CLIENT_CERT_PATH/_DATA,
 * TEMPORAL_TLS_CLIENT_KEY_PATH/_DATA, TEMPORAL_GRPC_META_*). Unlike the SDK, a TEMPORAL_CONFIG_FILE
 * that does not exist is refused (a mistyped path would quietly connect elsewhere), and every problem
 * of the file or profile is a problem naming it, never a stack trace.
 */
const SHARED_TEMPORAL_VARS: ReadonlySet<string> = new Set([
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_SERVER_NAME',
]);
const GRPC_META_PREFIX = 'TEMPORAL_GRPC_META_';

/** envconfig reads these from the environment the schemas pass it (loose objects): documented here, taken as they are. */
export const TemporalEnvConfigVars = group(
  z.object({
    TEMPORAL_CONFIG_FILE: doc(
      z.string().optional(),
      'The temporal.toml whose profile gives what the TEMPORAL_* variables above leave unset (address, namespace, api_key, [tls], [grpc_meta]). A named file that is missing or malformed, or a bad value in it, stops the process, naming it.',
      { defaultText: '~/.config/temporalio/temporal.toml on Linux ($XDG_CONFIG_HOME/temporalio/ when set), if it exists' },
    ),
    TEMPORAL_PROFILE: doc(z.string().optional(), 'The profile of that file; an unknown one stops the process, naming the profiles the file has.', {
      defaultText: 'default',
    }),
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: doc(
      z.string().optional(),
      "Temporal's variable where TEMPORAL_TLS_CA_PATH is unset: the server's CA certificate, a PEM file.",
    ),
    TEMPORAL_TLS_SERVER_CA_CERT_DATA: doc(
      z.string().optional(),
      "Temporal's variable where TEMPORAL_TLS_CA_PATH is unset: the server's CA certificate, the PEM itself.",
    ),
    TEMPORAL_TLS_CLIENT_CERT_PATH: doc(
      z.string().optional(),
      "Temporal's variable where TEMPORAL_TLS_CERT_PATH is unset: the client certificate, a PEM file (with its key).",
    ),
    TEMPORAL_TLS_CLIENT_CERT_DATA: doc(
      z.string().optional(),
      "Temporal's variable where TEMPORAL_TLS_CERT_PATH is unset: the client certificate, the PEM itself (with its key).",
    ),
    TEMPORAL_TLS_CLIENT_KEY_PATH: doc(
      z.string().optional(),
      "Temporal's variable where TEMPORAL_TLS_KEY_PATH is unset: the client certificate's key, a PEM file.",
    ),
    TEMPORAL_TLS_CLIENT_KEY_DATA: doc(
      z.string().optional(),
      "Temporal's variable where TEMPORAL_TLS_KEY_PATH is unset: the client certificate's key, the PEM itself.",
      { secret: true },
    ),
  }),
  "Temporal's own environment configuration",
  `The worker, the pipeline client, the CLI and the console read Temporal's environment configuration as the \`temporal\` CLI does (@temporalio/envconfig): a profile of temporal.toml and Temporal's own variables, below and ${GRPC_META_PREFIX}<HEADER> (gRPC metadata). They give what the TEMPORAL_* variables of the previous section leave unset. \`npm start\` ignores them (its stack is local).`,
);
const TEMPORAL_TLS_VARS = Object.keys(TemporalEnvConfigVars.shape).filter((name) => name.startsWith('TEMPORAL_TLS_'));

/** Why a file could not be read, in words. */
export function cannotRead(path: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return `cannot read ${path} (${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'a directory' : (code ?? String(error))})`;
}

/** A setting Temporal's environment configuration gave, and where: `profile "x" of <file>` or Temporal's variables. */
export interface FromEnvConfig<T> {
  readonly value: T;
  readonly from: string;
}

/** The settings of Temporal's environment configuration that apply: each absent when it has none or ours is set. */
export interface TemporalEnvConfig {
  readonly address?: FromEnvConfig<string>;
  readonly namespace?: FromEnvConfig<string>;
  readonly apiKey?: FromEnvConfig<string>;
  /** false: the profile's `tls.disabled = true`; true: it has TLS settings. */
  readonly tls?: FromEnvConfig<boolean>;
  readonly serverName?: FromEnvConfig<string>;
  readonly serverCa?: FromEnvConfig<Buffer>;
  readonly clientCertPair?: { readonly crt: FromEnvConfig<Buffer>; readonly key: FromEnvConfig<Buffer> };
  readonly metadata?: FromEnvConfig<Readonly<Record<string, string>>>;
}

/** Where envconfig looks when TEMPORAL_CONFIG_FILE is unset (its own rule, which it does not export). */
function defaultTemporalConfigFile(env: Readonly<Record<string, string>>): string | undefined {
  const os = platform();
  const dir =
    os === 'win32'
      ? env.APPDATA
      : os === 'darwin'
        ? env.HOME && join(env.HOME, 'Library', 'Application Support')
        : env.XDG_CONFIG_HOME
          ? isAbsolute(env.XDG_CONFIG_HOME)
            ? env.XDG_CONFIG_HOME
            : undefined
          : env.HOME && join(env.HOME, '.config');
  return dir ? join(dir, 'temporalio', 'temporal.toml') : undefined;
}

/** smol-toml's message, on one line: "Invalid TOML document: <what>\n\n<excerpt>". */
function tomlProblem(file: string, error: Error & { line?: number; column?: number }): string {
  const what = (error.message.split('\n')[0] ?? '').replace(/^Invalid TOML document:\s*/, '');
  return `${file} is not valid TOML: ${what}${error.line ? ` (line ${error.line}${error.column ? `, column ${error.column}` : ''})` : ''}`;
}

/** The profile names of a file that parsed, for a message. */
function profileNames(data: string): string {
  try {
    const names = Object.keys(loadTemporalConfigFile({ configSource: { data } }).profiles);
    return names.length > 0 ? `its profiles: ${names.join(', ')}` : 'it has no profiles';
  } catch {
    return 'it has no profiles';
  }
}

type Problem = (label: string, message: string) => void;

/** The profile named (or the default) of the file read, with Temporal's variables over it; undefined after a problem naming what is wrong. */
function loadProfile({
  data,
  profileName,
  vars,
  file,
  fileLabel,
  where,
  problem,
}: {
  readonly data: string | undefined;
  readonly profileName: string | undefined;
  readonly vars: Record<string, string>;
  readonly file: string | undefined;
  readonly fileLabel: string;
  readonly where: string;
  readonly problem: Problem;
}): ClientConfigProfile | undefined {
  const load = (withFile: boolean) =>
    loadClientConfigProfile({
      ...(withFile && data !== undefined ? { configSource: { data } } : { disableFile: true }),
      ...(profileName ? { profile: profileName } : {}),
      overrideEnvVars: vars,
    });
  try {
    try {
      return load(true);
    } catch (error) {
      // envconfig 1.24 reads the file's `profile` table unchecked: a file without one is a file without profiles.
      if (!(error instanceof TypeError) || profileName) throw error;
      return load(false);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (message.startsWith('Invalid TOML document') && file) problem(fileLabel, tomlProblem(file, error as Error));
    else if ((error instanceof TypeError || /^Profile '.*' not found/.test(message)) && data !== undefined)
      problem('TEMPORAL_PROFILE', `no profile "${profileName}" in ${file} (${profileNames(data)})`);
    else problem(where, message);
    return undefined;
  }
}

/** A PEM the profile names (a path or inline data), read now so a bad one stops start-up like ours. */
function readProfilePem(
  source: ConfigDataSource | undefined,
  key: string,
  envVar: string,
  { vars, where, problem }: { readonly vars: Record<string, string>; readonly where: string; readonly problem: Problem },
): FromEnvConfig<Buffer> | undefined {
  if (source === undefined) return undefined;
  const viaPath = 'path' in source;
  const fromVar = `${envVar}_${viaPath ? 'PATH' : 'DATA'}`;
  const label = vars[fromVar] !== undefined ? fromVar : `${where}: ${key}_${viaPath ? 'path' : 'data'}`;
  let bytes: Buffer;
  if (viaPath) {
    if (typeof source.path !== 'string') return void problem(label, 'must be a string');
    try {
      bytes = readFileSync(source.path);
    } catch (error) {
      return void problem(label, cannotRead(source.path, error));
    }
  } else {
    bytes = Buffer.from(source.data);
  }
  if (!bytes.toString('utf8').includes('-----BEGIN ')) return void problem(label, `${viaPath ? `${source.path} is` : 'is'} not PEM (no -----BEGIN line)`);
  return { value: bytes, from: label === fromVar ? fromVar : where };
}

/**
 * Reads Temporal's environment configuration from `env` (the raw variables) for the settings whose
 * variable of ours is unset; undefined after adding a problem for each thing wrong with it.
 */
export function temporalEnvConfig(env: Readonly<Record<string, unknown>>, ctx: z.RefinementCtx): TemporalEnvConfig | undefined {
  let ok = true;
  const problem = (label: string, message: string) => {
    ok = false;
    ctx.addIssue({ code: 'custom', path: [label], message });
  };
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (typeof value === 'string' && !SHARED_TEMPORAL_VARS.has(name)) vars[name] = value;

  const named = vars.TEMPORAL_CONFIG_FILE?.trim() || undefined;
  const file = named ?? defaultTemporalConfigFile(vars);
  const fileLabel = named ? 'TEMPORAL_CONFIG_FILE' : `Temporal config file ${file} (TEMPORAL_CONFIG_FILE unset)`;
  let data: string | undefined;
  if (file !== undefined) {
    try {
      data = readFileSync(file, 'utf8');
    } catch (error) {
      // No file where the CLI would look is the usual case; one named on purpose must exist.
      if (named || (error as NodeJS.ErrnoException).code !== 'ENOENT') problem(fileLabel, cannotRead(file, error));
      if (named) return undefined;
    }
  }
  const profileName = vars.TEMPORAL_PROFILE?.trim() || undefined;
  if (profileName && data === undefined) {
    if (ok)
      problem(
        'TEMPORAL_PROFILE',
        `no profile "${profileName}": there is no Temporal config file (TEMPORAL_CONFIG_FILE is unset${file ? ` and ${file} does not exist` : ''})`,
      );
    return undefined;
  }
  if (!ok) return undefined;
  // What the settings below came from: the profile, or with no file, only Temporal's TLS and metadata variables.
  const where = data === undefined ? "Temporal's variables" : `profile "${profileName ?? 'default'}" of ${file}`;

  const profile = loadProfile({ data, profileName, vars, file, fileLabel, where, problem });
  if (profile === undefined) return undefined;

  /** The profile's `key`, checked by `schema`, or a problem naming the profile and the key. */
  const take = <T>(schema: z.ZodType<T>, value: unknown, key: string): FromEnvConfig<T> | undefined => {
    if (value === undefined) return undefined;
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problem(`${where}: ${key}`, issue.message);
      return undefined;
    }
    return { value: parsed.data, from: where };
  };
  const pem = (source: ConfigDataSource | undefined, key: string, envVar: string) => readProfilePem(source, key, envVar, { vars, where, problem });

  const NonEmptyString = z.string().trim().min(1, { message: 'must not be empty' });
  const tls = profile.tls;
  if (tls?.disabled !== undefined && typeof tls.disabled !== 'boolean') problem(`${where}: tls.disabled`, 'must be true or false');
  // Our TEMPORAL_TLS=false turns the profile's TLS off, its CA, name and certificate with it.
  const tlsApplies = tls !== undefined && tls.disabled !== true && env.TEMPORAL_TLS !== false;
  const tlsVars = TEMPORAL_TLS_VARS.filter((name) => vars[name] !== undefined);
  const tlsFrom = [...(data === undefined ? [] : [where]), ...tlsVars].join(', ') || where;
  const certPairApplies = tlsApplies && env.TEMPORAL_TLS_CERT_PATH === undefined;
  const crt = certPairApplies ? pem(tls.clientCert, 'tls.client_cert', 'TEMPORAL_TLS_CLIENT_CERT') : undefined;
  const key = certPairApplies ? pem(tls.clientKey, 'tls.client_key', 'TEMPORAL_TLS_CLIENT_KEY') : undefined;
  if (certPairApplies && Boolean(tls.clientCert) !== Boolean(tls.clientKey))
    problem(
      `${where}: tls`,
      'a client certificate and its key go together (client_cert_* and client_key_*; TEMPORAL_TLS_CLIENT_CERT_* and TEMPORAL_TLS_CLIENT_KEY_*)',
    );
  const metaFrom =
    [...(data === undefined ? [] : [where]), ...(Object.keys(vars).some((name) => name.startsWith(GRPC_META_PREFIX)) ? [`${GRPC_META_PREFIX}*`] : [])].join(
      ', ',
    ) || where;
  const metadata =
    profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? take(z.record(z.string(), z.string()), profile.grpcMeta, 'grpc_meta') : undefined;

  const config: TemporalEnvConfig = {
    ...(env.TEMPORAL_ADDRESS === undefined ? { address: take(HostPort, profile.address, 'address') } : {}),
    ...(env.TEMPORAL_NAMESPACE === undefined ? { namespace: take(NonEmptyString, profile.namespace, 'namespace') } : {}),
    // Our TEMPORAL_API_KEY_FILE wins over the profile's api_key as TEMPORAL_API_KEY does.
    ...(env.TEMPORAL_API_KEY === undefined && env.TEMPORAL_API_KEY_FILE === undefined ? { apiKey: take(NonEmptyString, profile.apiKey, 'api_key') } : {}),
    ...(env.TEMPORAL_TLS === undefined && tls !== undefined ? { tls: { value: tls.disabled !== true, from: tls.disabled === true ? where : tlsFrom } } : {}),
    ...(tlsApplies && env.TEMPORAL_TLS_SERVER_NAME === undefined ? { serverName: take(HostName, tls.serverName, 'tls.server_name') } : {}),
    ...(tlsApplies && env.TEMPORAL_TLS_CA_PATH === undefined ? { serverCa: pem(tls.serverCACert, 'tls.server_ca_cert', 'TEMPORAL_TLS_SERVER_CA_CERT') } : {}),
    ...(crt && key ? { clientCertPair: { crt, key } } : {}),
    ...(metadata ? { metadata: { value: Object.freeze(metadata.value), from: metaFrom } } : {}),
  };
  if (!ok) return undefined;
  // Absent, not undefined, where nothing was given.
  return Object.freeze(Object.fromEntries(Object.entries(config).filter((entry) => entry[1] !== undefined)) as TemporalEnvConfig);
}
