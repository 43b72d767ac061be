/**
 * Every workflow the worker runs. Deterministic code only: no I/O, clock or randomness except
 * through Temporal's APIs (lint enforces the import ban). Activities are imported as types.
 */
export { AuditWorkflow } from './audit';
export { RetentionWorkflow } from './retention';
export { DecisionWorkflow } from './decision';
export { ScheduleWorkflow } from './schedule';
