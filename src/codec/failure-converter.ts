/**
 * The worker's failure converter (loaded by path into the workflow bundle and the worker): the SDK's
 * default, with failure messages and stack traces moved into a payload ("encoded attributes"), so the
 * encryption codec encrypts them like any other payload. Whatever the service writes into an error
 * message (it may echo what it was sent) never lands in history in clear. The failure type that
 * operators filter on stays readable; clients decode the message back with the same codec.
 */
import { DefaultFailureConverter, type FailureConverter } from '@temporalio/common';

export const failureConverter: FailureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
