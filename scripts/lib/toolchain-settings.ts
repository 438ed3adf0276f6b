/**
 * Where the scripts, tests and benchmarks find the Temporal binaries and other tools
 * (loadToolchainConfig: the overrides set), and the releases only scripts/provision-temporal.sh reads.
 */
import { z } from 'zod';
import { doc, group } from '../../src/settings/document.js';
import { parseEnv } from '../../src/settings/load.js';

const RELEASE_RULE = { message: 'must be a release such as 1.32.2' };
const Release = z
  .string()
  .trim()
  .regex(/^\d+\.\d+\.\d+$/, RELEASE_RULE);
export const ExistingPath = z.string().trim().min(1, { message: 'must not be empty' });
const VERSIONS_FILE = 'scripts/lib/temporal-versions.env';
const PROVISION_SCRIPT = 'scripts/provision-temporal.sh';

export const ToolchainVars = group(
  z.object({
    TEMPORAL_CACHE_DIR: doc(
      ExistingPath.optional(),
      'Where the Temporal binaries (and MinIO, Compose, Node.js releases) are built or fetched and cached; CI keeps it outside the clone.',
      {
        defaultText: '.temporal/ in the project',
      },
    ),
    TEMPORAL_SERVER_VERSION: doc(
      Release.optional(),
      'The Temporal server release of the dev server (npm start, npm test), prod:check, chaos on PostgreSQL and temporal-compose.yml.',
      {
        defaultFrom: VERSIONS_FILE,
      },
    ),
    TEMPORAL_UPGRADE_PATH: doc(
      z
        .string()
        .trim()
        .regex(/^\d+\.\d+\.\d+(\s+\d+\.\d+\.\d+)*$/, { message: 'must be releases separated by spaces, oldest first, e.g. 1.29.1 1.30.9' })
        .transform((text) => Object.freeze(text.split(/\s+/)))
        .optional(),
      'The releases `npm run prod:upgrade` takes a database through, oldest first, ending at TEMPORAL_SERVER_VERSION.',
      { defaultFrom: VERSIONS_FILE },
    ),
    TEMPORAL_UI_VERSION: doc(Release.optional(), 'The Web UI server release beside the dev server.', { defaultFrom: VERSIONS_FILE }),
    TEMPORAL_SERVER_PATH: doc(ExistingPath.optional(), 'An existing Temporal server binary instead of the cached build (of TEMPORAL_SERVER_VERSION only).'),
    TEMPORAL_SQL_TOOL_PATH: doc(ExistingPath.optional(), 'An existing temporal-sql-tool for prod:check (of TEMPORAL_SERVER_VERSION only).'),
    TEMPORAL_SCHEMA_DIR: doc(
      ExistingPath.optional(),
      "The server's PostgreSQL schema directory (.../schema/postgresql/v12) for prod:check (of TEMPORAL_SERVER_VERSION only).",
      {
        defaultText: "the server module's, in the Go module cache",
      },
    ),
    TEMPORAL_UI_SERVER_PATH: doc(ExistingPath.optional(), 'An existing Web UI server binary instead of the cached build.'),
    TEMPORAL_CLI_PATH: doc(ExistingPath.optional(), 'An existing `temporal` CLI (operator commands; no longer the dev server: scripts/lib/dev-server.ts).', {
      defaultText: 'the cached one (fetched on Linux x86_64, else built), else `temporal` on PATH',
    }),
    TEMPORAL_TEST_SERVER_PATH: doc(ExistingPath.optional(), 'An existing sdk-java time-skipping test server instead of the cached one.'),
    MINIO_PATH: doc(ExistingPath.optional(), 'An existing MinIO server (the S3 server of the payload-store tests) instead of the cached build.'),
    OPENBAO_PATH: doc(
      ExistingPath.optional(),
      "An existing OpenBao `bao` binary (the KMS of the vault-transit key provider's tests) instead of the one fetched into the cache.",
    ),
    MOTO_SERVER_PATH: doc(
      ExistingPath.optional(),
      "An existing `moto_server` (moto's AWS stand-in, the KMS of the aws-kms key provider's tests) instead of the one installed into the cache.",
    ),
    DOCKER_COMPOSE_PATH: doc(
      ExistingPath.optional(),
      'An existing Docker Compose v2 (docker-compose), only to validate temporal-compose.yml (`npm run compose:check`, test/compose/; no Docker engine needed).',
      { defaultText: 'the cached build, else docker-compose on PATH' },
    ),
    PROD_CHECK_PG_BINDIR: doc(
      ExistingPath.optional(),
      'A PostgreSQL bin directory holding initdb and pg_ctl, for prod:check, prod:upgrade, chaos on PostgreSQL, deploy:check and bench:burst.',
      { defaultText: 'the newest /usr/lib/postgresql/<major>/bin' },
    ),
    GOMODCACHE: doc(ExistingPath.optional(), "Go's module cache, where prod:check finds the server's PostgreSQL schema.", {
      defaultText: '`go env GOMODCACHE`, else ~/go/pkg/mod',
    }),
  }),
  'Temporal binaries and other tools',
  'Where the scripts, the tests and the benchmarks find the Temporal server, its Web UI, the CLI, the test server, MinIO, OpenBao, moto, Docker Compose and PostgreSQL. `npm run provision` (scripts/provision-temporal.sh) builds or fetches them into the cache; the *_PATH variables point at existing binaries instead.',
);

export const ProvisioningVars = group(
  z.object({
    MINIO_VERSION: doc(z.string().optional(), 'The MinIO Go module version provisioning builds.', { defaultFrom: PROVISION_SCRIPT }),
    DOCKER_COMPOSE_VERSION: doc(z.string().optional(), 'The Docker Compose v2 Go module version provisioning builds.', { defaultFrom: PROVISION_SCRIPT }),
  }),
  'Provisioning',
  'Releases only scripts/provision-temporal.sh reads (with TEMPORAL_CACHE_DIR, the versions and the *_PATH variables above).',
);

/** Overrides only: the callers fall back on the cache in the project and the releases scripts/lib/temporal-versions.env declares. */
const ToolchainEnv = ToolchainVars.transform((env) =>
  Object.freeze({
    cacheDir: env.TEMPORAL_CACHE_DIR,
    versions: Object.freeze({ server: env.TEMPORAL_SERVER_VERSION, upgradePath: env.TEMPORAL_UPGRADE_PATH, ui: env.TEMPORAL_UI_VERSION }),
    paths: Object.freeze({
      server: env.TEMPORAL_SERVER_PATH,
      sqlTool: env.TEMPORAL_SQL_TOOL_PATH,
      schemaDir: env.TEMPORAL_SCHEMA_DIR,
      uiServer: env.TEMPORAL_UI_SERVER_PATH,
      cli: env.TEMPORAL_CLI_PATH,
      testServer: env.TEMPORAL_TEST_SERVER_PATH,
      minio: env.MINIO_PATH,
      openbao: env.OPENBAO_PATH,
      motoServer: env.MOTO_SERVER_PATH,
      dockerCompose: env.DOCKER_COMPOSE_PATH,
      postgresBinDir: env.PROD_CHECK_PG_BINDIR,
      goModCache: env.GOMODCACHE,
    }),
  }),
);

export type ToolchainConfig = z.output<typeof ToolchainEnv>;

/** Where the scripts, tests and benchmarks find the Temporal binaries and other tools: the overrides set. */
export function loadToolchainConfig(env?: NodeJS.ProcessEnv): ToolchainConfig {
  return parseEnv(ToolchainEnv, env);
}
