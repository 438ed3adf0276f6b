/**
 * Opens what `ConnectionsClient.connect` owns: the Temporal connection (a failure to open it said as
 * TemporalUnavailableError or TemporalAccessDeniedError), tracing when configured, and the Client over
 * both with the config's converter. Apart from the client because opening is done once, its calls often.
 */
import { Client, Connection } from '@temporalio/client';
import { dataConverterFor } from '../codec/data-converter.js';
import { connectFailureReason } from '../temporal/connect-error.js';
import { temporalConnectionOptions } from '../temporal/connection.js';
import { TemporalApiKeyFileError } from '../settings/temporal-api-key-file.js';
import type { ClientConfig } from '../settings/client.js';
import { ConnectionTracingInterceptor } from '../tracing/client-tracing.js';
import { acquireTracing, type Tracing } from '../tracing/provider.js';
import { TemporalAccessDeniedError, TemporalUnavailableError } from './errors.js';

export interface OpenedClient {
  readonly client: Client;
  readonly connection: Connection;
  readonly tracing: Tracing | undefined;
  /** The API key the connection was opened with (TEMPORAL_API_KEY_FILE's renewals start from it). */
  readonly openedWith: string | undefined;
}

export async function openClient(config: ClientConfig): Promise<OpenedClient> {
  const { address, namespace } = config.temporal;
  let connection: Connection;
  let openedWith: string | undefined;
  try {
    const options = await temporalConnectionOptions(config.temporal);
    openedWith = options.apiKey;
    connection = await Connection.connect(options);
  } catch (error) {
    if (error instanceof TemporalApiKeyFileError)
      throw new TemporalUnavailableError(address, `cannot connect to Temporal at ${address}: ${error.message}`, { cause: error });
    throw (
      TemporalAccessDeniedError.of(address, error) ??
      new TemporalUnavailableError(address, `cannot reach Temporal at ${address}: ${await connectFailureReason(config.temporal, error)}`, { cause: error })
    );
  }
  // With tracing configured, a connection's trace starts at its start call here.
  let tracing: Tracing | undefined;
  try {
    tracing = config.tracing ? await acquireTracing(config.tracing) : undefined;
  } catch (error) {
    await connection.close();
    throw error;
  }
  const interceptors = tracing ? { workflow: [new ConnectionTracingInterceptor(connection.workflowService, namespace)] } : undefined;
  const client = new Client({
    connection,
    namespace,
    dataConverter: dataConverterFor(config),
    interceptors,
    ...(config.identity === undefined ? {} : { identity: config.identity }),
  });
  return { client, connection, tracing, openedWith };
}
