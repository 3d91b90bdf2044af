/* tslint:disable */
/* eslint-disable */
export * from './BulkAcceptance.js';
export * from './BulkOperation.js';
export * from './CommandRequest.js';
export * from './PausedSubscription.js';
export * from './Problem.js';
export * from './ProblemErrorsInner.js';
export * from './RejectedSubscription.js';
export * from './ResumedSubscription.js';
export * from './SubscriptionStatus.js';
