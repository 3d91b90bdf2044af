/**
 * The notices of the scheduled resumes already set when a merchant's resumeNoticeHours changes
 * (notice.rules.ts): told by the pause policy before its PUT answers, so that every resume not
 * noticed yet gets the notice the new rule gives. A resume set afterwards gets its notice from the
 * change that sets it (subscriptions.rules.ts).
 */
import type { Clock } from '../lib/clock.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import type { DueStore, PendingResume } from './due.store.js';
import { noticeDueAt } from './notice.rules.js';

export class ResumeNotices {
  constructor(
    private readonly due: Pick<DueStore, 'upcomingResumes' | 'setNotices'>,
    /** The holds' notices (src/holds/): each active hold's resumeAt is a scheduled resume too. */
    private readonly holds: { setNotices(merchantId: string, noticeAt: (resumeAt: string) => string | null): Promise<void> },
    /** The subscriptions service's (SubscriptionsService): each write queues behind the changes of the same subscription. */
    private readonly mutex: PerKeyQueue,
    /** The merchant's clock (the test clock in test mode): a notice made due by the change is dated by it. */
    private readonly clockOf: (merchantId: string) => Clock | Promise<Clock>,
  ) {}

  /**
   * After a change of the merchant's resumeNoticeHours: every scheduled resume not noticed yet gets
   * the notice time `hours` gives (a time already past falls due at once, dated now), or none when off. Each
   * update is conditional on the schedule as read, so one a request changed meanwhile keeps the
   * notice its own change gave it.
   */
  async renotice(merchantId: string, hours: number | null): Promise<void> {
    const now = (await this.clockOf(merchantId)).timestamp();
    const noticeAt = (resumeAt: string) => (hours === null ? null : noticeDueAt(resumeAt, hours, now));
    await this.holds.setNotices(merchantId, noticeAt);
    const pending = await this.upcomingResumes(merchantId);
    if (pending.length === 0) return;
    await this.mutex.runAll(
      pending.map((p) => p.id),
      () => this.due.setNotices(merchantId, pending, noticeAt),
    );
  }

  /**
   * The merchant's own scheduled resumes not noticed yet. A hold's resume is not a subscription's
   * schedule: its notice is the hold's, kept beside its release time (holds.repository.ts).
   */
  upcomingResumes(merchantId: string): Promise<PendingResume[]> {
    return this.due.upcomingResumes(merchantId);
  }
}
