// What the worker loads: every workflow type of this product.
export { connectionWorkflow } from './connection.js';
