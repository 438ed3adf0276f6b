/**
 * The pipeline client's side of a connection's trace. The trace starts at the client's start call
 * (the SDK's StartWorkflow span, whose context travels to the workflow in a Temporal header), and
 * every later call about the same connection (the update that answers a challenge, a signal, a
 * cancel) joins it: the client reads the context back from the connection's start event. So an
 * operator answering from another process (CLI, console) still adds to the connection's one trace.
 *
 * Headers are not payloads: the codec leaves them alone, and this one holds only trace ids.
 * Queries and describes are not traced: they are read-only, frequent (watch loops), and tracing them
 * would cost a history read each.
 */
import { context, propagation, ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import type {
  Connection,
  Next,
  RequestCancelWorkflowExecutionResponse,
  TerminateWorkflowExecutionResponse,
  WorkflowCancelInput,
  WorkflowClientInterceptor,
  WorkflowSignalInput,
  WorkflowSignalWithStartInput,
  WorkflowStartInput,
  WorkflowStartOutput,
  WorkflowStartUpdateInput,
  WorkflowStartUpdateOutput,
  WorkflowStartUpdateWithStartInput,
  WorkflowStartUpdateWithStartOutput,
  WorkflowTerminateInput,
} from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { OpenTelemetryWorkflowClientInterceptor } from '../sdk/internals.js';
import { TRACE_HEADER } from './workflow-interceptors.js';

interface Execution {
  readonly workflowId: string;
  readonly runId?: string | undefined;
}

export class ConnectionTracingInterceptor implements WorkflowClientInterceptor {
  private readonly otel = new OpenTelemetryWorkflowClientInterceptor();

  constructor(
    private readonly workflowService: Connection['workflowService'],
    private readonly namespace: string,
  ) {}

  // Starts open the connection's trace.
  start(input: WorkflowStartInput, next: Next<WorkflowClientInterceptor, 'start'>): Promise<string> {
    return this.otel.start(input, next);
  }

  startWithDetails(input: WorkflowStartInput, next: Next<WorkflowClientInterceptor, 'startWithDetails'>): Promise<WorkflowStartOutput> {
    return this.otel.startWithDetails(input, next);
  }

  startUpdateWithStart(
    input: WorkflowStartUpdateWithStartInput,
    next: Next<WorkflowClientInterceptor, 'startUpdateWithStart'>,
  ): Promise<WorkflowStartUpdateWithStartOutput> {
    return this.otel.startUpdateWithStart(input, next);
  }

  signalWithStart(input: WorkflowSignalWithStartInput, next: Next<WorkflowClientInterceptor, 'signalWithStart'>): Promise<string> {
    return this.otel.signalWithStart(input, next);
  }

  // Later calls join it.
  startUpdate(input: WorkflowStartUpdateInput, next: Next<WorkflowClientInterceptor, 'startUpdate'>): Promise<WorkflowStartUpdateOutput> {
    return this.inConnectionTrace(input.workflowExecution, () => this.otel.startUpdate(input, next));
  }

  signal(input: WorkflowSignalInput, next: Next<WorkflowClientInterceptor, 'signal'>): Promise<void> {
    return this.inConnectionTrace(input.workflowExecution, () => this.otel.signal(input, next));
  }

  cancel(input: WorkflowCancelInput, next: Next<WorkflowClientInterceptor, 'cancel'>): Promise<RequestCancelWorkflowExecutionResponse> {
    return this.inConnectionTrace(input.workflowExecution, () => this.otel.cancel(input, next));
  }

  terminate(input: WorkflowTerminateInput, next: Next<WorkflowClientInterceptor, 'terminate'>): Promise<TerminateWorkflowExecutionResponse> {
    return this.inConnectionTrace(input.workflowExecution, () => this.otel.terminate(input, next));
  }

  private async inConnectionTrace<T>(execution: Execution, call: () => Promise<T>): Promise<T> {
    const parent = await this.startContextOf(execution);
    return parent ? context.with(parent, call) : call();
  }

  /** The trace context the connection was started with: the first event of its history. */
  private async startContextOf(execution: Execution): Promise<Context | undefined> {
    let header;
    try {
      const { history } = await this.workflowService.getWorkflowExecutionHistory({
        namespace: this.namespace,
        execution: { workflowId: execution.workflowId, runId: execution.runId ?? '' },
        maximumPageSize: 1,
      });
      header = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.header?.fields?.[TRACE_HEADER];
    } catch {
      // Best effort: without it the call opens its own trace; if the connection is missing or
      // Temporal is unreachable, the call itself fails and says so.
      return undefined;
    }
    if (!header) return undefined;
    const carrier = defaultPayloadConverter.fromPayload<Record<string, string>>(header);
    return propagation.extract(ROOT_CONTEXT, carrier);
  }
}
