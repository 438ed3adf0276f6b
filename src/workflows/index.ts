// What the worker loads: every workflow type of this product.
export { connectionWorkflow } from './connection.js';
export { forgetLoginWorkflow } from './forget.js';
export { loginRetentionWorkflow } from './retention.js';
export { tenantThrottleWorkflow } from './tenant-throttle.js';
export { bookEntryWorkflow } from './book-entry.js';
export { bookRefreshWorkflow } from './book-refresh.js';
export { bookReportPageWorkflow } from './book-report-page.js';
export { callbackDeliveryWorkflow } from './callback-delivery.js';
export { connectionAdmissionWorkflow } from './admission.js';
