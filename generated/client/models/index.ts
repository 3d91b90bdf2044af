/* tslint:disable */
/* eslint-disable */
export * from './BulkAcceptance.js';
export * from './BulkCommandRequest.js';
export * from './BulkOperation.js';
export * from './BulkPauseRequest.js';
export * from './BulkRequest.js';
export * from './BulkRequestCounts.js';
export * from './BulkRequestItem.js';
export * from './BulkRequestItemList.js';
export * from './BulkRequestList.js';
export * from './CommandOutcome.js';
export * from './CommandRequest.js';
export * from './PauseProblem.js';
export * from './PauseRequest.js';
export * from './PausedSubscription.js';
export * from './Problem.js';
export * from './ProblemErrorsInner.js';
export * from './RejectedSubscription.js';
export * from './ResumedSubscription.js';
export * from './Schedule.js';
export * from './Subscription.js';
export * from './SubscriptionList.js';
export * from './SubscriptionStatus.js';
