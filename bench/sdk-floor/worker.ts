/**
 * The floor's worker process: the SDK's defaults, a bundle of ./workflows.ts, no codec, no
 * interceptors. TEMPORAL_ADDRESS and TEMPORAL_TASK_QUEUE say where; prints "worker started".
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { floorActivities, floorServiceActivities } from './activities.js';

const address = process.env.TEMPORAL_ADDRESS;
const taskQueue = process.env.TEMPORAL_TASK_QUEUE;
if (!address || !taskQueue) {
  process.stderr.write('sdk-floor worker: TEMPORAL_ADDRESS and TEMPORAL_TASK_QUEUE are required\n');
  process.exit(2);
}
Runtime.install({ logger: new DefaultLogger('WARN') });
const connection = await NativeConnection.connect({ address });
const worker = await Worker.create({
  connection,
  taskQueue,
  // bench/sdk-floor.ts runs this file compiled elsewhere and says where the workflows are.
  workflowsPath: process.env.SDK_FLOOR_WORKFLOWS_PATH ?? fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  activities: { ...floorActivities, ...floorServiceActivities },
  // The one setting that is not the SDK's default: a heartbeating poll holds its slot for its whole
  // wait, and the bench keeps 500 pending at once (the product's bench sets N + 100 the same way).
  maxConcurrentActivityTaskExecutions: 1_000,
});
process.stdout.write('"worker started"\n');
await worker.run();
await connection.close();
process.exit(0);
