// What the worker loads: every workflow type of this product.
export { connectionWorkflow } from './connection/connection.js';
export { forgetLoginWorkflow } from './retention/forget.js';
export { loginRetentionWorkflow } from './retention/retention.js';
export { tenantThrottleWorkflow } from './throttle/tenant-throttle.js';
export { bookEntryWorkflow } from './book/book-entry.js';
export { bookRefreshWorkflow } from './book/book-refresh.js';
export { bookReportPageWorkflow } from './book/book-report-page.js';
export { callbackDeliveryWorkflow } from './callbacks/callback-delivery.js';
export { connectionAdmissionWorkflow } from './admission/admission.js';
